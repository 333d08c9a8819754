"""Blind solver guards, A/B: how often the solver reproduces recorded candidates with and without a guard.

Every attempt is a blind trial (the instruction and the environment only; the candidate's tests grade it), the
same solver model, and the same turn budget; the arms differ only in the agent loop's settings:

    base     the round's solver settings (``guarded_solver``) with ``outputs_before_submit = 0``
    outputs  the round's solver settings as they are (a submit is refused, twice at most, while a path the
             instruction names and that was absent at the start is still missing or empty)

Attempts run round-robin (attempt 1 of every candidate in both arms, then attempt 2, ...; the arm order alternates)
so a run stopped at any point compares like with like. Each attempt lands in OUT/attempts.jsonl as it finishes;
the same command continues the run. An attempt without a reward (an infrastructure failure) is not recorded and
runs again on the next invocation.

    .venv/bin/python benchmarks/blind_guard.py --out runs/blind-guard --attempts 3 [CANDIDATE_DIR...]
    .venv/bin/python benchmarks/blind_guard.py --out runs/blind-guard --report
    (--log benchmarks/logs/blind-guard-embedded-1.5b.jsonl: the committed log, which the same command continues)

The default candidates (``benchmarks/blind_tasks/``) are the five self-consistent candidates of the staged arm of
the v7 generation-yield series (``benchmarks/logs/yield-embedded-1.5b-v7.jsonl``, items A1 #0, #2, #3, #6, #8),
kept as they were generated: instruction, environment, reference solution and the tests holding the recorded
outputs. In v7 the blind solver reproduced one of them (#3) in 1 of its 14 rewarded attempts.

Prints per arm: reproduced attempts / attempts with a Wilson 95% interval, the one-sided Fisher p that ``outputs``
beats ``base``, how attempts ended (exit reasons), the refusals the guard made, and the mean wall per attempt.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from generation_yield import fisher_greater, wilson

from autoenvscaling.agent.config import AgentConfig, guarded_solver
from autoenvscaling.agent.trajectory import read_trajectory
from autoenvscaling.errors import AutoEnvError
from autoenvscaling.llm.config import parse_model_arg
from autoenvscaling.llm.factory import open_model
from autoenvscaling.roles.solver import SolverAgent
from autoenvscaling.roles.tuning import tune_solver
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.tasks import load_task
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.results import is_solved
from autoenvscaling.verify.trial import TrialRunner

ARMS = ("base", "outputs")
BLIND_TASKS = Path(__file__).resolve().parent / "blind_tasks"


def arm_config(arm: str, max_turns: int) -> AgentConfig:
    config = guarded_solver(max_turns)
    return config.model_copy(update={"outputs_before_submit": 0}) if arm == "base" else config


def load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def schedule(candidates: list[Path], attempts: int) -> list[tuple[int, Path, str]]:
    order = []
    for a in range(1, attempts + 1):
        for c, cand in enumerate(candidates):
            arms = ARMS if (a + c) % 2 else ARMS[::-1]
            order += [(a, cand, arm) for arm in arms]
    return order


def _guard_refusals(trial_dir: Path) -> int:
    path = trial_dir / "agent" / "trajectory.json"
    if not path.is_file():
        return 0
    return sum(1 for s in read_trajectory(path).steps if s.extra and "outputs_missing" in s.extra)


def run(args: argparse.Namespace, log: Path) -> None:
    candidates = [Path(c).resolve() for c in args.candidates]
    for c in candidates:
        if not (c / "task.toml").is_file():
            sys.exit(f"{c}: not a task dir (no task.toml)")
    done = {(r["candidate"], r["arm"], r["attempt"]) for r in load(log)}
    todo = [(a, c, arm) for a, c, arm in schedule(candidates, args.attempts) if (c.name, arm, a) not in done]
    print(f"{len(todo)} attempts to run ({len(done)} done) -> {log}", flush=True)
    if not todo:
        return
    backend = DockerBackend()
    runner = TrialRunner(backend, EnvironmentBuilder(backend), run_id=f"blind-guard-{args.out.name}", prewarm=False)
    model_config = tune_solver(parse_model_arg(args.model))
    try:
        with open_model(model_config) as model:
            for k, (a, cand, arm) in enumerate(todo, 1):
                trial_dir = args.out / "trials" / f"{cand.name}__{arm}-{a}"
                started = time.perf_counter()
                result = runner.run(
                    load_task(cand),
                    SolverAgent(model, arm_config(arm, args.max_turns)),
                    trial_dir,
                    agent_timeout_sec=args.timeout,
                )
                wall = time.perf_counter() - started
                meta = result.agent_result.metadata if result.agent_result else {}
                if result.reward is None:
                    why = result.exception_info.exception_message if result.exception_info else "no reward"
                    print(f"[{k}/{len(todo)}] {cand.name} {arm} #{a}: no reward ({why}); not recorded", flush=True)
                    continue
                record = {
                    "candidate": cand.name,
                    "arm": arm,
                    "attempt": a,
                    "reward": result.reward,
                    "exit_reason": meta.get("exit_reason"),
                    "turns": meta.get("turns"),
                    "guard_refusals": _guard_refusals(trial_dir),
                    "wall_sec": round(wall, 1),
                }
                with log.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(record) + "\n")
                print(
                    f"[{k}/{len(todo)}] {cand.name} {arm} #{a}: reward {result.reward} ({record['exit_reason']}, "
                    f"{record['guard_refusals']} refusals, {wall:.0f} s)",
                    flush=True,
                )
    finally:
        runner.close()


def report(records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for arm in ARMS:
        rows = [r for r in records if r["arm"] == arm]
        ok = sum(is_solved(r["reward"]) for r in rows)
        lo, hi = wilson(ok, len(rows)) if rows else (0.0, 0.0)
        out[arm] = {
            "attempts": len(rows),
            "reproduced": ok,
            "wilson95": [round(lo, 3), round(hi, 3)],
            "exit_reasons": dict(Counter(str(r["exit_reason"]) for r in rows)),
            "guard_refusals": sum(r["guard_refusals"] for r in rows),
            "mean_wall_sec": round(sum(r["wall_sec"] for r in rows) / len(rows), 1) if rows else None,
            "per_candidate": {
                c: f"{sum(is_solved(r['reward']) for r in rows if r['candidate'] == c)}/"
                f"{sum(r['candidate'] == c for r in rows)}"
                for c in sorted({r["candidate"] for r in records})
            },
        }
    b, o = out["base"], out["outputs"]
    if b["attempts"] and o["attempts"]:
        out["fisher_p_outputs_gt_base"] = round(
            fisher_greater(o["reproduced"], o["attempts"], b["reproduced"], b["attempts"]), 4
        )
    print("| arm | reproduced / attempts | Wilson 95% | exit reasons | guard refusals | wall per attempt |")
    print("|---|---|---|---|---|---|")
    for arm in ARMS:
        s = out[arm]
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(s["exit_reasons"].items()))
        print(
            f"| {arm} | {s['reproduced']}/{s['attempts']} | [{s['wilson95'][0]:.2f}, {s['wilson95'][1]:.2f}] | "
            f"{reasons} | {s['guard_refusals']} | {s['mean_wall_sec']} s |"
        )
    for arm in ARMS:
        print(f"{arm} per candidate: {out[arm]['per_candidate']}")
    if "fisher_p_outputs_gt_base" in out:
        print(f"one-sided Fisher p (outputs > base): {out['fisher_p_outputs_gt_base']}")
    return out


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "candidates", nargs="*", help="task dirs whose tests hold recorded expectations (default: blind_tasks/*)"
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--attempts", type=int, default=3, help="attempts per candidate and arm")
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--max-turns", type=int, default=10, help="the blind solver's turns (ProposeConfig's)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="agent-phase limit per attempt, seconds")
    parser.add_argument("--report", action="store_true", help="print the tables of what is recorded, run nothing")
    parser.add_argument("--log", type=Path, help="the attempts log (default OUT/attempts.jsonl; commit it to resume)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.log or args.out / "attempts.jsonl"
    signal.signal(signal.SIGTERM, _interrupt)
    if not args.report:
        args.candidates = args.candidates or sorted(str(p.parent) for p in BLIND_TASKS.glob("*/task.toml"))
        try:
            run(args, log)
        except KeyboardInterrupt:
            print("stopped; the same command continues", flush=True)
        except AutoEnvError as e:
            sys.exit(f"stopped: {e}\nthe same command continues from there")
    summary = report(load(log))
    log.with_suffix(".summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
