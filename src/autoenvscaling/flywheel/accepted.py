"""The environments a flywheel run accepted: one record per calibrated pool entry, round by round.

``autoenv flywheel run`` prints them at its end and ``benchmarks/demo_series.py`` counts them; both read them
here, from the calibrate stages' outputs and the run's pool.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autoenvscaling.flywheel.config import FlywheelConfig
from autoenvscaling.flywheel.layout import RunPaths, read_output
from autoenvscaling.flywheel.records import CalibrateOutput
from autoenvscaling.pool import Pool


@dataclass(frozen=True)
class Accepted:
    round: int
    env_id: str
    status: str | None  # the calibration's: learnable, too-easy, too-hard (None: calibration failed)
    pass_rate: float | None
    headline: str  # the instruction's first real sentence
    path: Path  # the environment's task dir in the pool


def accepted_environments(paths: RunPaths, config: FlywheelConfig) -> list[Accepted]:
    """Every environment the run added to its pool, in round order (an empty list before any calibration)."""
    found: list[Accepted] = []
    for n in paths.rounds_present():
        out = read_output(paths.stage_dir(n, "calibrate"), CalibrateOutput)
        if out is None or not out.calibrations:
            continue
        with Pool.open(config.pool or paths.default_pool, dedup=config.dedup) as pool:
            for c in out.calibrations:
                entry = pool.get(c.env_id)
                found.append(Accepted(n, c.env_id, c.status, c.pass_rate, headline(entry.instruction), entry.path))
    return found


def headline(instruction: str) -> str:
    """The instruction's first sentence-like line: markdown marks stripped, headings (``**Input file:**``) and lines
    of fewer than 4 words skipped; else its first non-blank line."""
    lines = [ln.strip() for ln in instruction.splitlines() if ln.strip()]
    for line in lines:
        text = line.lstrip("#*->` ").replace("**", "").strip()
        if len(text.split()) >= 4 and not text.endswith(":"):
            return text
    return lines[0] if lines else ""
