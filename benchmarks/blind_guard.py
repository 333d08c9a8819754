"""Blind solver settings, A/B: how often the solver reproduces recorded candidates under two agent settings.

Every attempt is a blind trial (the instruction and the environment only; the candidate's tests grade it), the
same solver model, and the same turn budget; the two arms (``--arms A,B``) differ only in the settings below,
each a change to the round's solver settings (``guarded_solver``) at the code's commit:

    base       outputs_before_submit = 0 (the guard that refuses a submit while a named output is missing)
    outputs    the round's solver settings as they are
    no-reruns  flag_reruns off (no note and no hotter sample when an earlier command reruns to the same output)
    cool       the round's settings, sampled at temperature 0.3 (the server's default is 0.8)
    oneshot    a one-shot attempt (``agent.config.one_shot``: one script from the instruction and the inputs'
               first lines, run once), as blind reproduction starts with it
    oneshot-plain   the same, with the one-shot system prompt as it was on 2026-12-05 (the one it is now)
    oneshot-habits  the same, with four lines of shell habits added to that prompt (tried 2026-12-05 at
               be3862e as "oneshot": 7/24 reproduced against the plain prompt's 10/24, so not kept)

Attempts run round-robin (attempt 1 of every candidate in both arms, then attempt 2, ...; the arm order alternates)
so a run stopped at any point compares like with like. Each attempt lands in the attempts log as it finishes; the
same command continues the run. An attempt without a reward (an infrastructure failure) is not recorded and runs
again on the next invocation.

    .venv/bin/python benchmarks/blind_guard.py --out runs/blind-guard --attempts 3 [CANDIDATE_DIR...]
    .venv/bin/python benchmarks/blind_guard.py --out runs/blind-guard --report
    (--log benchmarks/logs/blind-guard-embedded-1.5b.jsonl: the committed log, which the same command continues)

The candidates (``benchmarks/blind_tasks/``), kept as they were generated (instruction, environment, reference
solution and the tests holding the recorded outputs): ``v7-*``, the five self-consistent candidates of the staged
arm of yield series v7 (items A1 #0, #2, #3, #6, #8; the blind solver reproduced #3 in 1 of its 14 rewarded
attempts there); ``v13-*`` and ``v14-*``, five candidates of series v13 and v14 whose instruction states its rule
plainly (A1 #8 ">= 400", #12 "404", #15 "> 400", v14 A1 #3 "GET", v14 P1 #0 "not index"; v13 #12, v14 A1 #3 and
v14 P1 #0 were reproduced there, each in one of 1-3 attempts); ``v16-*``, the two valid candidates of series v16
(A1 #3 "greater than 399", #6 "greater than 400": the loop reproduced each, after two failed one-shot attempts).
Default: every candidate.

Prints per arm: reproduced attempts / attempts with a Wilson 95% interval, the one-sided Fisher p that the second
arm beats the first, how attempts ended (exit reasons), the submits the outputs guard refused, the reruns flagged,
and the mean wall per attempt.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from generation_yield import fisher_greater, wilson

from autoenvscaling.agent.config import AgentConfig, guarded_solver, one_shot
from autoenvscaling.agent.trajectory import read_trajectory
from autoenvscaling.errors import AutoEnvError
from autoenvscaling.llm.base import Message, Model, ModelResponse, Sampling
from autoenvscaling.llm.config import parse_model_arg
from autoenvscaling.llm.factory import open_model
from autoenvscaling.roles.solver import SolverAgent
from autoenvscaling.roles.tuning import tune_solver
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.tasks import load_task
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.results import is_solved
from autoenvscaling.verify.trial import TrialRunner

# arm -> (changes to the round's solver settings, sampling temperature; None: the server's own)
ARMS: dict[str, tuple[dict[str, Any], float | None]] = {
    "base": ({"outputs_before_submit": 0}, None),
    "outputs": ({}, None),
    "no-reruns": ({"flag_reruns": False}, None),
    "cool": ({}, 0.3),
    "oneshot": ({}, None),
    "oneshot-plain": ({}, None),
    "oneshot-habits": ({}, None),
}
BLIND_TASKS = Path(__file__).resolve().parent / "blind_tasks"
PLAIN_ONESHOT_SYSTEM = """\
You are an expert at the Linux command line. You get a task for a container (Debian with bash, coreutils, grep,
sed, awk, sort, uniq, wc, gzip, jq, python3; no network) and write one bash script that does the whole task.

The script runs once, in a fresh bash shell in the task's working directory, and then your work is graded: there
is no second turn. Read the task's files by their absolute paths, write exactly the files the task names, in
exactly the format it asks for.

Reply with one ```bash block holding the whole script, and nothing after it.
"""
HABITS = """
Habits that avoid the usual mistakes of such scripts:
- Compare numbers with awk on the field that holds them (`awk '$9 >= 400'`), not with a grep pattern of digits.
  Count the fields of an input line shown below (split at blanks) before you pick the field number.
- Read a .gz file with zcat or zgrep: cat, grep and awk see only its compressed bytes.
- grep prints whole lines; with several files it puts each file's name in front (use -h, or cat them into it).
- Write each output file directly (`... > /app/out.txt`); do not check first whether it exists.
"""
ONESHOT_SYSTEMS = {
    "oneshot-plain": PLAIN_ONESHOT_SYSTEM,
    "oneshot-habits": PLAIN_ONESHOT_SYSTEM.replace("\n\nReply with", "\n" + HABITS + "\nReply with"),
}


def arm_config(arm: str, max_turns: int) -> AgentConfig:
    config = guarded_solver(max_turns).model_copy(update=ARMS[arm][0])
    if not arm.startswith("oneshot"):
        return config
    config = one_shot(config)
    if arm in ONESHOT_SYSTEMS:
        config = config.model_copy(update={"templates": {**config.templates, "system.j2": ONESHOT_SYSTEMS[arm]}})
    return config


class Tempered:
    """``model`` sampled at ``temperature`` wherever a call does not set its own (a repeat's hotter sample does)."""

    def __init__(self, model: Model, temperature: float | None) -> None:
        self.model, self.temperature = model, temperature
        self.name, self.provider = model.name, model.provider

    def complete(self, messages: list[Message], *, sampling: Sampling | None = None, **kw: Any) -> ModelResponse:
        if self.temperature is not None and (sampling is None or sampling.temperature is None):
            sampling = (sampling or Sampling()).model_copy(update={"temperature": self.temperature})
        return self.model.complete(messages, sampling=sampling, **kw)


def load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def schedule(candidates: list[Path], attempts: int, pair: tuple[str, str]) -> list[tuple[int, Path, str]]:
    order = []
    for a in range(1, attempts + 1):
        for c, cand in enumerate(candidates):
            arms = pair if (a + c) % 2 else pair[::-1]
            order += [(a, cand, arm) for arm in arms]
    return order


def _steps_with(trial_dir: Path, key: str) -> int:
    path = trial_dir / "agent" / "trajectory.json"
    if not path.is_file():
        return 0
    return sum(1 for s in read_trajectory(path).steps if s.extra and key in s.extra)


def run(args: argparse.Namespace, log: Path) -> None:
    candidates = [Path(c).resolve() for c in args.candidates]
    for c in candidates:
        if not (c / "task.toml").is_file():
            sys.exit(f"{c}: not a task dir (no task.toml)")
    done = {(r["candidate"], r["arm"], r["attempt"]) for r in load(log)}
    todo = [(a, c, arm) for a, c, arm in schedule(candidates, args.attempts, args.arms) if (c.name, arm, a) not in done]
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
                    SolverAgent(Tempered(model, ARMS[arm][1]), arm_config(arm, args.max_turns)),
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
                    "guard_refusals": _steps_with(trial_dir, "outputs_missing"),
                    "reruns": _steps_with(trial_dir, "rerun_same_output"),
                    "wall_sec": round(wall, 1),
                    "code": args.code,
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


def report(records: list[dict[str, Any]], pair: tuple[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for arm in pair:
        rows = [r for r in records if r["arm"] == arm]
        ok = sum(is_solved(r["reward"]) for r in rows)
        lo, hi = wilson(ok, len(rows)) if rows else (0.0, 0.0)
        out[arm] = {
            "attempts": len(rows),
            "reproduced": ok,
            "wilson95": [round(lo, 3), round(hi, 3)],
            "exit_reasons": dict(Counter(str(r["exit_reason"]) for r in rows)),
            "guard_refusals": sum(r["guard_refusals"] for r in rows),
            "reruns": sum(r.get("reruns", 0) for r in rows),
            "mean_wall_sec": round(sum(r["wall_sec"] for r in rows) / len(rows), 1) if rows else None,
            "per_candidate": {
                c: f"{sum(is_solved(r['reward']) for r in rows if r['candidate'] == c)}/"
                f"{sum(r['candidate'] == c for r in rows)}"
                for c in sorted({r["candidate"] for r in records})
            },
        }
    first, second = (out[arm] for arm in pair)
    key = f"fisher_p_{pair[1]}_gt_{pair[0]}"
    if first["attempts"] and second["attempts"]:
        out[key] = round(
            fisher_greater(second["reproduced"], second["attempts"], first["reproduced"], first["attempts"]), 4
        )
    print("| arm | reproduced / attempts | Wilson 95% | exit reasons | guard refusals | reruns | wall per attempt |")
    print("|---|---|---|---|---|---|---|")
    for arm in pair:
        s = out[arm]
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(s["exit_reasons"].items()))
        print(
            f"| {arm} | {s['reproduced']}/{s['attempts']} | [{s['wilson95'][0]:.2f}, {s['wilson95'][1]:.2f}] | "
            f"{reasons} | {s['guard_refusals']} | {s['reruns']} | {s['mean_wall_sec']} s |"
        )
    for arm in pair:
        print(f"{arm} per candidate: {out[arm]['per_candidate']}")
    if key in out:
        print(f"one-sided Fisher p ({pair[1]} > {pair[0]}): {out[key]}")
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
    parser.add_argument(
        "--arms", default="base,outputs", help=f"the two arms, first the reference (of {', '.join(ARMS)})"
    )
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--max-turns", type=int, default=10, help="the blind solver's turns (ProposeConfig's)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="agent-phase limit per attempt, seconds")
    parser.add_argument("--report", action="store_true", help="print the tables of what is recorded, run nothing")
    parser.add_argument("--log", type=Path, help="the attempts log (default OUT/attempts.jsonl; commit it to resume)")
    args = parser.parse_args()
    pair = tuple(args.arms.split(","))
    if len(pair) != 2 or pair[0] == pair[1] or not set(pair) <= set(ARMS):
        sys.exit(f"--arms: two different arms of {', '.join(ARMS)}, e.g. outputs,cool (got {args.arms!r})")
    args.arms = pair
    args.code = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
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
    summary = report(load(log), args.arms)
    log.with_suffix(".summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
