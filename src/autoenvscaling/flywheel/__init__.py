"""The flywheel: resumable rounds of solve -> propose -> validate -> dedup -> calibrate -> train -> evaluate."""
