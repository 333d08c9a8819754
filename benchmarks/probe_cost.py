"""What the quality probes add to validating the valid examples, measured within one run.

    python benchmarks/probe_cost.py [--repeats 3] [--json out.json] [TASK_DIR ...]

Each task is validated twice, back to back, with the probes off and on (concurrency 1, images built before
timing; the order alternates from task to task so that neither side always runs second). The probes run beside
oracle trials 2..K and the nop run, so their own time (``probes`` in the report) is not what they add: the
figure is the difference of the two wall times, summed over the tasks, against the total with the probes off.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from autoenvscaling.sandbox.registry import get_backend
from autoenvscaling.tasks import load_task
from autoenvscaling.tasks.model import find_task_dirs
from autoenvscaling.validate.probes import GENERATED_PROBES
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.environment import EnvironmentBuilder

ROOT = Path(__file__).resolve().parent.parent
PROBES = ("exploits", "reference", "instruction", "answer", "mutation")


def valid_examples() -> list[Path]:
    dirs = find_task_dirs([ROOT / "examples"])
    return [d for d in dirs if load_task(d).config.metadata.get("expected_verdict") == "valid"]


def _validate(tasks: list[Path], config: ValidationConfig, run_dir: Path) -> dict[str, Any]:
    (report,), summary = ValidationRun(run_dir, get_backend("docker"), config).run(tasks)
    return {"report": report, "summary": summary}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", type=Path, nargs="*")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    tasks = [t.resolve() for t in args.tasks] or valid_examples()
    builder = EnvironmentBuilder(get_backend("docker"))
    for t in tasks:
        builder.image_for(load_task(t))
    configs = {
        "off": ValidationConfig(repeats=args.repeats),
        "on": ValidationConfig(repeats=args.repeats, probes=GENERATED_PROBES),
    }
    rows: dict[str, dict[str, Any]] = {}
    hackable = probed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, task in enumerate(tasks):
            order = ["off", "on"] if i % 2 == 0 else ["on", "off"]
            got = {side: _validate([task], configs[side], Path(tmp) / f"{i}-{side}") for side in order}
            on, off = got["on"]["report"], got["off"]["report"]
            hackable += got["on"]["summary"].hackable
            probed += got["on"]["summary"].probed
            per = on.probes.timings if on.probes else {}
            row = {
                "off_s": off.timings.get("total", 0.0),
                "on_s": on.timings.get("total", 0.0),
                "probes_own_s": on.timings.get("probes", 0.0),
                "test_runs": on.probes.test_runs if on.probes else 0,
                "verdicts": [off.verdict.value, on.verdict.value],
                "flags": on.probes.flags if on.probes else None,
                **per,
            }
            rows[on.task_name] = row
            cells = " ".join(f"{k}={per.get(k, 0.0):.2f}" for k in PROBES)
            flags = ",".join(on.probes.flags) if on.probes else "(not probed)"
            print(
                f"{on.task_name:28} off {row['off_s']:6.2f} s  on {row['on_s']:6.2f} s "
                f"(+{row['on_s'] - row['off_s']:5.2f}; probes' own {row['probes_own_s']:5.2f} s, {row['test_runs']} "
                f"test runs; {cells})  {flags}",
                flush=True,
            )
    off_tot = sum(r["off_s"] for r in rows.values())
    on_tot = sum(r["on_s"] for r in rows.values())
    own = sum(r["probes_own_s"] for r in rows.values())
    print(f"total: probes off {off_tot:.1f} s, on {on_tot:.1f} s: the probes add {on_tot - off_tot:.1f} s "
          f"({100 * (on_tot - off_tot) / max(off_tot, 1e-9):+.0f} %); their own time {own:.1f} s "
          f"({100 * own / max(off_tot, 1e-9):.0f} % of the off total)")  # fmt: skip
    for k in PROBES:
        part = sum(r.get(k, 0.0) for r in rows.values())
        print(f"  {k:10} {part:6.1f} s ({100 * part / max(off_tot, 1e-9):.0f} % of the off total)")
    print(f"hackable {hackable}/{probed}")
    if args.json:
        totals = {"off_s": off_tot, "on_s": on_tot, "probes_own_s": own, "hackable": hackable, "probed": probed}
        args.json.write_text(json.dumps({"tasks": rows, "totals": totals}, indent=2))


if __name__ == "__main__":
    main()
