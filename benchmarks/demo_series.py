"""`make demo`, repeated: on how many of N runs of one commit does the round accept a new environment?

Issue 8's target is at least one accepted environment on at least 3 of 5 runs of `make demo`. One run is 10-50
minutes on 2 cores, so the series is resumable across invocations and sessions:

    .venv/bin/python benchmarks/demo_series.py --n 5                 # starts or continues
    .venv/bin/python benchmarks/demo_series.py --n 5 --report        # the table of what is done; runs nothing

Run ``i`` is ``autoenv flywheel run --config examples/flywheel/demo.toml --run-dir OUT/<commit>/run-<i>`` in a child
process (its own progress bars on this terminal). When it ends, one line lands in LOG: the commit, the wall,
the round's figures (proposals, valid, accepted, verdicts, rejection reasons, held-out pass rate, errors) and
each accepted environment's status, pass rate and first line. A killed series continues with the same
command: a run dir that has no line yet is resumed by the flywheel itself (the line then says ``resumed``
and its wall counts the last invocation only). A flywheel that exits non-zero stops the series and records
nothing: a run that could not run is not a run that accepted nothing. A run that finished with errors in
its metrics (a solver or validation attempt that could not run) is recorded with them; the report shows it
and leaves it out of the count.

The report counts the lines of one commit (``--code``, default: the last commit that changed ``src/`` or
``examples/``), since runs of different code are not samples of one system; run ``i`` of commit ``C`` is
``OUT/C/run-<i>``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from generation_yield import code_version, wilson

from autoenvscaling.errors import AutoEnvError
from autoenvscaling.flywheel.accepted import accepted_environments
from autoenvscaling.flywheel.rounds import Flywheel

REPO = Path(__file__).resolve().parents[1]


def run_dir(out: Path, code: str, index: int) -> Path:
    """Run ``index`` of commit ``code``: a run dir of another commit is never resumed as this one's."""
    return out / code / f"run-{index}"


def flywheel_command(config: Path, rdir: Path, overrides: list[str]) -> list[str]:
    """A new run, or the flywheel's own resume when the run dir already holds one."""
    cli = [sys.executable, "-m", "autoenvscaling.cli", "flywheel"]
    if (rdir / "config.resolved.toml").is_file():
        return [*cli, "resume", str(rdir)]
    return [*cli, "run", "--config", str(config), "--run-dir", str(rdir), *overrides]


def outcome(rdir: Path) -> dict[str, Any]:
    """What a finished run's round did, read from its metrics and pool (the last round when there are several)."""
    fw = Flywheel.open(rdir)
    metrics = [json.loads(line) for line in fw.paths.metrics.read_text(encoding="utf-8").splitlines() if line]
    if not metrics:
        raise AutoEnvError(f"{rdir}: the run finished without metrics")
    m = metrics[-1]
    accepted = [
        {"status": a.status, "pass_rate": a.pass_rate, "headline": a.headline[:200], "env_id": a.env_id}
        for a in accepted_environments(fw.paths, fw.config)
    ]
    return {
        "rounds": len(metrics),
        "proposals": sum(x["proposals"] for x in metrics),
        "valid": sum(x["valid"] for x in metrics),
        "n_accepted": len(accepted),  # metrics' "added" counts invalid candidates kept for dedup too
        "by_verdict": m["by_verdict"],
        "rejection_reasons": m["rejection_reasons"],
        "pass_rate_heldout": m["pass_rate_heldout"],
        "errors": sum(sum(x.get("errors", {}).values()) for x in metrics),
        "accepted": accepted,
    }


def load_log(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def append(path: Path, line: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def report(lines: list[dict[str, Any]], code: str, target: tuple[int, int]) -> dict[str, Any]:
    """The commit's runs: how many accepted at least one environment (Wilson 95%), and the target's verdict."""
    mine = sorted((x for x in lines if x["code"] == code), key=lambda x: x["index"])
    others = sorted({x["code"] for x in lines} - {code})
    clean = [x for x in mine if not x["errors"]]  # a run with infrastructure errors is no sample either way
    hits = sum(1 for x in clean if x["n_accepted"] > 0)
    lo, hi = wilson(hits, len(clean))
    need, of = target
    if len(clean) >= of:
        verdict = "met" if sum(1 for x in clean[:of] if x["n_accepted"] > 0) >= need else "not met"
    else:
        verdict = f"open ({of - len(clean)} run(s) to go)"
    walls = [x["wall_sec"] for x in clean]
    print(
        f"commit {code}: {hits} of {len(clean)} runs accepted an environment (95% CI {lo:.0%}-{hi:.0%}); "
        f"target {need} of the first {of}: {verdict}"
        + (f"; {len(mine) - len(clean)} run(s) with errors not counted" if len(clean) < len(mine) else "")
    )
    if others:
        print(f"(lines of other commits, not counted: {', '.join(others)})")
    print("\n| run | date (UTC) | wall | load | accepted | verdicts | held-out | errors | accepted |")
    print("|---|---|---|---|---|---|---|---|---|")
    for x in mine:
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(x["by_verdict"].items()))
        acc = "; ".join(
            f"{a['status'] or 'error'} ({_rate(a['pass_rate'])}): {a['headline'][:80]}" for a in x["accepted"]
        )
        wall = f"{x['wall_sec'] / 60:.1f} min" + (" (resumed)" if x["resumed"] else "")
        print(
            f"| {x['index']} | {x['date'][:16]} | {wall} | {x['load'][0]:.1f}-{x['load'][1]:.1f} | "
            f"{x['n_accepted']}/{x['proposals']} | {verdicts} | {_rate(x['pass_rate_heldout'])} | {x['errors']} | "
            f"{acc or '-'} |"
        )
    return {
        "code": code,
        "runs": len(clean),
        "accepted_runs": hits,
        "wilson95": [lo, hi],
        "target": {"need": need, "of": of, "verdict": verdict},
        "median_wall_sec": statistics.median(walls) if walls else None,
        "runs_with_errors": len(mine) - len(clean),
        "other_codes": others,
    }


def run_series(args: argparse.Namespace, code: str) -> int:
    done = {x["index"] for x in load_log(args.log) if x["code"] == code}
    todo = [i for i in range(args.n) if i not in done]
    print(f"{len(todo)} run(s) to go of {args.n} on {code} -> {args.log}", flush=True)
    for k, i in enumerate(todo, 1):
        rdir = run_dir(args.out, code, i)
        cmd = flywheel_command(args.config, rdir, args.set)
        resumed = cmd[4] == "resume"
        print(f"[{k}/{len(todo)}] run {i}: {'resuming' if resumed else 'starting'} {rdir}", flush=True)
        load_before = os.getloadavg()[0]
        start = time.monotonic()
        proc = subprocess.Popen(cmd)
        try:
            proc.wait()
        except KeyboardInterrupt:  # the flywheel got the same Ctrl-C and stops in order: wait for it
            proc.wait()
            raise
        wall = time.monotonic() - start
        if proc.returncode != 0:
            print(
                f"run {i}: the flywheel exited {proc.returncode}; nothing recorded, the series stops "
                "(the same command resumes it)",
                file=sys.stderr,
            )
            return proc.returncode
        line = {
            "index": i,
            "code": code,
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "wall_sec": round(wall, 1),
            "resumed": resumed,
            "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "run_dir": str(rdir),
            "config": str(args.config),
            "overrides": args.set,
            **outcome(rdir),
        }
        append(args.log, line)
        print(
            f"run {i}: {line['n_accepted']} accepted of {line['proposals']} proposals, {wall / 60:.1f} min", flush=True
        )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5, help="runs of the commit")
    ap.add_argument("--config", type=Path, default=REPO / "examples" / "flywheel" / "demo.toml")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a config override (repeatable)")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "demo-series", help="the runs' dirs")
    ap.add_argument("--log", type=Path, default=REPO / "benchmarks" / "logs" / "demo-series.jsonl")
    ap.add_argument("--code", default=None, help="the commit to report (default: this tree's)")
    ap.add_argument("--target", default="3/5", help="NEED/OF: runs with an accepted environment among the first OF")
    ap.add_argument("--report", action="store_true", help="print the table of what is done; run nothing")
    args = ap.parse_args()
    try:
        need, of = (int(v) for v in args.target.split("/"))
    except ValueError:
        ap.error(f"--target {args.target!r}: expected NEED/OF, e.g. 3/5")
    if not args.config.is_file():
        ap.error(f"--config {args.config}: no such file")
    args.config = args.config.resolve()
    if args.code and not args.report:
        ap.error("--code names the commit to report: use it with --report (a run always records its own code)")
    code = args.code or code_version()
    rc = 0
    if not args.report:
        if code.endswith("-dirty") or code == "unknown":
            ap.error(f"the code is {code}: commit first, so every run names the code it ran")
        try:
            rc = run_series(args, code)
        except KeyboardInterrupt:
            print("interrupted; the same command resumes the series", file=sys.stderr)
            return 130
    summary = report(load_log(args.log), code, (need, of))
    args.log.with_suffix(".summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return rc


if __name__ == "__main__":
    sys.exit(main())
