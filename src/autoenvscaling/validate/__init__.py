"""Is a task a valid environment? Lint, build, leakage scan, the oracle K times and the nop agent in fresh
sandboxes, quality probes (exploits, leaked answers, weak tests) -> a verdict per task (``validator``), and runs
over many tasks with results.jsonl, summary.json and resume (``run``)."""
