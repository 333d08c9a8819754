"""Wall time to validate the valid examples (K oracle runs + nop each) at concurrency 1 and 2, with the
share spent per phase and our per-trial overhead (everything except the task's own commands).

    python benchmarks/validate_throughput.py [--repeats 3] [--concurrency 1 2] [--json out.json]

Images are built once before timing (a warm layer cache is the steady state of a flywheel).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from autoenvscaling.sandbox.registry import get_backend

from autoenvscaling.tasks import load_task
from autoenvscaling.tasks.model import find_task_dirs
from autoenvscaling.validate.report import ValidationReport
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.environment import EnvironmentBuilder

ROOT = Path(__file__).resolve().parent.parent
PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier", "teardown")


def valid_examples() -> list[Path]:
    dirs = find_task_dirs([ROOT / "examples"])
    return [d for d in dirs if load_task(d).config.metadata.get("expected_verdict") == "valid"]


def trial_stats(reports: list[ValidationReport]) -> dict[str, float]:
    overheads, teardowns = [], []
    phase_tot = dict.fromkeys(PHASES, 0.0)
    for r in reports:
        for t in r.trials:
            wall = sum(t.phases.get(p, 0.0) for p in PHASES)
            overheads.append(wall - t.commands.get("agent", 0.0) - t.commands.get("tests", 0.0))
            teardowns.append(t.phases.get("teardown", 0.0))
            for p in PHASES:
                phase_tot[p] += t.phases.get(p, 0.0)
    total = sum(phase_tot.values()) or 1.0
    out = {f"share_{p}": phase_tot[p] / total for p in PHASES}
    out["trials"] = float(len(overheads))
    out["overhead_median_s"] = statistics.median(overheads)
    out["overhead_max_s"] = max(overheads)
    out["teardown_median_s"] = statistics.median(teardowns)
    out["teardown_max_s"] = max(teardowns)
    out["build_s"] = sum(r.timings.get("build", 0.0) for r in reports)
    out["leakage_s"] = sum(r.timings.get("leakage", 0.0) for r in reports)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    tasks = valid_examples()
    backend = get_backend("docker")
    builder = EnvironmentBuilder(backend)
    for t in tasks:  # warm the image cache; builds are not what we time here
        builder.image_for(load_task(t))

    rows: dict[int, dict[str, float]] = {}
    for n in args.concurrency:
        with tempfile.TemporaryDirectory() as tmp:
            run = ValidationRun(
                Path(tmp) / f"c{n}", backend, ValidationConfig(repeats=args.repeats), concurrency=n
            )
            start = time.perf_counter()
            reports, _ = run.run(tasks)
            wall = time.perf_counter() - start
        bad = [r.task_name for r in reports if not r.is_valid]
        stats = trial_stats(reports)
        stats["wall_s"] = wall
        stats["not_valid"] = float(len(bad))
        rows[n] = stats

    print(
        f"{len(tasks)} valid examples, K={args.repeats} + nop ({(args.repeats + 1) * len(tasks)} trials per run)"
    )
    print(f"{'metric':<24}" + "".join(f"{'c=' + str(n):>12}" for n in rows))
    for key in rows[args.concurrency[0]]:
        print(f"{key:<24}" + "".join(f"{rows[n][key]:>12.3f}" for n in rows))
    if len(rows) > 1:
        base = rows[args.concurrency[0]]["wall_s"]
        for n in args.concurrency[1:]:
            print(f"speed-up c={n} vs c={args.concurrency[0]}: {base / rows[n]['wall_s']:.2f}x")
    print("targets: overhead per trial <= 1 s, teardown <= 0.5 s")
    if args.json:
        args.json.write_text(json.dumps({str(k): v for k, v in rows.items()}, indent=2))


if __name__ == "__main__":
    main()
