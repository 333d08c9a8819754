"""What the quality probes add to validating the valid examples, measured within one run.

    python benchmarks/probe_cost.py [--repeats 3] [--json out.json] [TASK_DIR ...]

Each task is validated once with the probes on (concurrency 1, images built before timing). Its report splits
the wall time: ``probes`` (exploits, reference run, leak-answer, mutants) against everything else (lint,
build, leakage scan, K oracle trials, nop), so both sides share the machine's load at the same moment.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from autoenvscaling.sandbox.registry import get_backend
from autoenvscaling.tasks import load_task
from autoenvscaling.tasks.model import find_task_dirs
from autoenvscaling.validate.probes import GENERATED_PROBES
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.environment import EnvironmentBuilder

ROOT = Path(__file__).resolve().parent.parent
PROBES = ("exploits", "reference", "answer", "mutation")


def valid_examples() -> list[Path]:
    dirs = find_task_dirs([ROOT / "examples"])
    return [d for d in dirs if load_task(d).config.metadata.get("expected_verdict") == "valid"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", type=Path, nargs="*")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    tasks = [t.resolve() for t in args.tasks] or valid_examples()
    backend = get_backend("docker")
    builder = EnvironmentBuilder(backend)
    for t in tasks:
        builder.image_for(load_task(t))
    rows: list[dict[str, float]] = []
    names: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = ValidationConfig(repeats=args.repeats, probes=GENERATED_PROBES)
        reports, summary = ValidationRun(Path(tmp) / "run", backend, config).run(tasks)
    for r in reports:
        probes = r.timings.get("probes", 0.0)
        rest = r.timings.get("total", 0.0) - probes
        per = r.probes.timings if r.probes else {}
        runs = r.probes.test_runs if r.probes else 0
        flags = ",".join(r.probes.flags) if r.probes else "(not probed)"
        names.append(r.task_name)
        rows.append({"rest_s": rest, "probes_s": probes, "test_runs": float(runs), **per})
        cells = " ".join(f"{k}={per.get(k, 0.0):.2f}" for k in PROBES)
        print(f"{r.task_name:28} rest {rest:6.2f} s  probes {probes:6.2f} s ({runs} test runs; {cells})  {flags}")
    rest_tot = sum(x["rest_s"] for x in rows)
    probe_tot = sum(x["probes_s"] for x in rows)
    print(f"total: rest {rest_tot:.1f} s, probes {probe_tot:.1f} s (+{100 * probe_tot / max(rest_tot, 1e-9):.0f} %)")
    for k in PROBES:
        part = sum(x.get(k, 0.0) for x in rows)
        print(f"  {k:10} {part:6.1f} s (+{100 * part / max(rest_tot, 1e-9):.0f} %)")
    print(f"hackable {summary.hackable}/{summary.probed}; flags {summary.probe_flags}")
    if args.json:
        args.json.write_text(
            json.dumps({"tasks": dict(zip(names, rows, strict=True)), "summary": summary.model_dump()}, indent=2)
        )


if __name__ == "__main__":
    main()
