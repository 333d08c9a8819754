"""Per-rollout time of the TRL training environment, ours against TRL's ``HarborSpec``, with reward parity.

    python benchmarks/train_env.py [--rollouts 5] [--harbor-python PY] [--docker-config DIR] [--json out.json]

Both sides get the same round export (the flywheel example tasks, exported by our code) and the same scripted
rollouts, driven as TRL's ``GRPOTrainer`` drives an ``environment_factory`` (``reset(**row)``, tool calls,
reward):

* ``oracle``: the task's ``solution/solve.sh`` sent as one ``bash`` command; ``nothing``: no command at all;
* ``timed``: nine cheap commands then the oracle's (10 commands), ``--rollouts`` times per task after those two.

Per-rollout time is reset + the commands + the reward, wall clock, over the ``timed`` rollouts. Ours:
``train.environment.TaskEnvFactory`` over the Docker sandbox, in this process. HarborSpec's:
``benchmarks/harbor_env_worker.py`` in a separate Python >= 3.12 venv with ``trl`` and ``harbor`` (``--harbor-python``,
else ``$AUTOENV_HARBOR_PYTHON``, else ``../harbor-venv/bin/python`` beside this checkout; made by
``scripts/harbor_side_venv.sh``), which needs the ``docker compose`` v2 plugin (``--docker-config``, else
``$AUTOENV_HARBOR_DOCKER_CONFIG``, else ``../harbor-tools/docker-config``, else the caller's ``DOCKER_CONFIG``).
Without that venv the HarborSpec side is skipped with the reason, and ours still runs.

Every rollout's reward must be the same on both sides (and 1 for the oracle's commands, 0 for nothing): the script
exits 1 on any difference. Target: ours >= 10x faster per rollout (median).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import uuid
from collections.abc import Sequence
from pathlib import Path

import tomli_w
from pydantic import BaseModel

from autoenvscaling.export.round import export_round
from autoenvscaling.pool import EnvStatus, Pool
from autoenvscaling.sandbox.base import SandboxBackend
from autoenvscaling.train.environment import TaskEnvFactory
from autoenvscaling.train.rows import TaskRow, load_rows

REPO = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).resolve().parent / "harbor_env_worker.py"
EXAMPLE_TASKS = [REPO / "examples" / "flywheel" / "tasks" / n for n in ("heldout-reverse-lines", "seed-count-words")]
DEFAULT_HARBOR_PYTHON = REPO.parent / "harbor-venv" / "bin" / "python"
DEFAULT_DOCKER_CONFIG = REPO.parent / "harbor-tools" / "docker-config"
COMMANDS_PER_ROLLOUT = 10
FILLERS = ["pwd", "ls -la", "id -u", "uname -s", "echo hi", "date +%s", "ls /tmp", "env | wc -l", "cat /etc/hostname"]
EXPECTED = {"oracle": 1.0, "nothing": 0.0, "timed": 1.0}
TARGET_RATIO = 10.0


class Rollout(BaseModel):
    task_dir: str
    kind: str  # oracle | nothing | timed
    commands: list[str]
    timed: bool = False


class RolloutResult(BaseModel):
    task_dir: str
    kind: str
    timed: bool
    reward: float | None
    error: str | None = None
    seconds: float | None = None
    reset_sec: float | None = None
    commands_sec: float | None = None
    reward_sec: float | None = None
    phases: dict[str, float] = {}  # ours: the trial's phases (result.json), where the reward phase's time goes


class SideSummary(BaseModel):
    side: str
    rollouts: int
    median_sec: float
    mean_sec: float
    min_sec: float
    max_sec: float
    reset_median_sec: float
    commands_median_sec: float
    reward_median_sec: float
    phase_medians: dict[str, float] = {}


class Side(BaseModel):
    name: str
    results: list[RolloutResult] = []
    skipped: str | None = None  # why this side did not run
    summary: SideSummary | None = None
    load_before: float | None = None
    load_after: float | None = None


class Report(BaseModel):
    tasks: list[str]
    verifier_mode: str  # "as declared" or the mode forced on copies of the tasks (--verifier-mode)
    rollouts_per_task: int
    commands_per_rollout: int = COMMANDS_PER_ROLLOUT
    ours: Side
    harbor: Side
    parity: list[str]  # one line per difference; empty when every reward matches
    ratio_median: float | None = None
    ratio_mean: float | None = None
    target_ratio: float = TARGET_RATIO
    meets_target: bool | None = None


def make_export(work: Path, tasks: Sequence[Path]) -> Path:
    """A round's export (what the flywheel's export stage writes) with ``tasks`` as the learnable environments."""
    out = work / "export"
    with Pool.open(work / "pool") as pool:
        for task in tasks:
            added = pool.add(task, domain="terminal", round=1, source="import")
            pool.set_status(added.id, EnvStatus.LEARNABLE)
        export_round(pool, out, round_=1, solver_trials=[], episodes=[])
    return out


def with_verifier_mode(tasks: Sequence[Path], dest: Path, mode: str) -> list[Path]:
    """Copies of ``tasks`` whose ``[verifier] environment_mode`` is ``mode``."""
    out = []
    for task in tasks:
        copy = dest / task.name
        shutil.copytree(task, copy)
        raw = tomllib.loads((copy / "task.toml").read_text(encoding="utf-8"))
        raw.setdefault("verifier", {})["environment_mode"] = mode
        (copy / "task.toml").write_text(tomli_w.dumps(raw), encoding="utf-8")
        out.append(copy)
    return out


def oracle_command(task_dir: Path) -> str:
    """The oracle's commands: the task's ``solution/solve.sh``, sent as one command line."""
    return (task_dir / "solution" / "solve.sh").read_text(encoding="utf-8")


def scripted_rollouts(rows: Sequence[TaskRow], timed_per_task: int) -> list[Rollout]:
    """Per task an oracle and a do-nothing rollout, then ``timed_per_task`` rounds of one 10-command rollout each."""
    plan: list[Rollout] = []
    for row in rows:
        solve = oracle_command(Path(row.task_dir))
        plan += [Rollout(task_dir=row.task_dir, kind="oracle", commands=[solve]),
                 Rollout(task_dir=row.task_dir, kind="nothing", commands=[])]  # fmt: skip
    for _ in range(timed_per_task):
        for row in rows:
            commands = [*FILLERS[: COMMANDS_PER_ROLLOUT - 1], oracle_command(Path(row.task_dir))]
            plan.append(Rollout(task_dir=row.task_dir, kind="timed", commands=commands, timed=True))
    return plan


def parity(plan: Sequence[Rollout], ours: Sequence[RolloutResult], theirs: Sequence[RolloutResult]) -> list[str]:
    """Differences, one line each: a rollout whose rewards differ between the sides, failed on either side
    (no reward), or is not the expected reward (1 for the oracle's commands, 0 for nothing)."""
    problems: list[str] = []
    if not (len(plan) == len(ours) == len(theirs)):
        problems.append(f"rollout counts differ: plan {len(plan)}, ours {len(ours)}, harbor {len(theirs)}")
    for i, (item, a, b) in enumerate(zip(plan, ours, theirs, strict=False)):
        where = f"#{i} {Path(item.task_dir).name} {item.kind}"
        if (a.task_dir, a.kind) != (item.task_dir, item.kind) or (b.task_dir, b.kind) != (item.task_dir, item.kind):
            problems.append(f"{where}: results out of order")
            continue
        if a.reward is None or b.reward is None:
            problems.append(f"{where}: no reward (ours: {a.error or a.reward}, harbor: {b.error or b.reward})")
        elif a.reward != b.reward:
            problems.append(f"{where}: ours {a.reward:g} != harbor {b.reward:g}")
        elif a.reward != EXPECTED[item.kind]:
            problems.append(f"{where}: both {a.reward:g}, expected {EXPECTED[item.kind]:g}")
    return problems


def summarize(side: str, results: Sequence[RolloutResult]) -> SideSummary | None:
    timed = [r for r in results if r.timed and r.seconds is not None]
    if not timed:
        return None
    secs = [r.seconds for r in timed if r.seconds is not None]

    def med(field: str) -> float:
        return statistics.median(float(getattr(r, field) or 0.0) for r in timed)

    return SideSummary(side=side, rollouts=len(timed), median_sec=statistics.median(secs),
                       mean_sec=statistics.fmean(secs), min_sec=min(secs), max_sec=max(secs),
                       reset_median_sec=med("reset_sec"), commands_median_sec=med("commands_sec"),
                       reward_median_sec=med("reward_sec"),
                       phase_medians={k: statistics.median(r.phases.get(k, 0.0) for r in timed)
                                      for k in sorted({k for r in timed for k in r.phases})})  # fmt: skip


class OurSide:
    """Our environment: one instance reused across rollouts (as TRL reuses it across batches)."""

    def __init__(self, backend: SandboxBackend, rows: Sequence[TaskRow], work: Path) -> None:
        self.rows = {row.task_dir: row for row in rows}
        self.factory = TaskEnvFactory(backend, work / "rollouts", run_id=f"bench-train-env-{uuid.uuid4().hex[:8]}")
        self.env = self.factory()

    def run(self, item: Rollout) -> RolloutResult:
        env, done = self.env, {"task_dir": item.task_dir, "kind": item.kind, "timed": item.timed}
        t0 = time.perf_counter()
        try:
            env.reset(**self.rows[item.task_dir].model_dump())
            t1 = time.perf_counter()
            for command in item.commands:
                env.bash(command)
            t2 = time.perf_counter()
            reward = env.get_reward()
            t3 = time.perf_counter()
        except Exception as e:  # one failed rollout is reported, the others still run
            return RolloutResult(**done, reward=None, error=f"{type(e).__name__}: {e}")
        error = None
        if reward is None and env.trial_result is not None and env.trial_result.exception_info is not None:
            info = env.trial_result.exception_info
            error = f"{info.exception_type}: {info.exception_message}"
        phases = env.trial_result.phase_seconds() if env.trial_result is not None else {}
        return RolloutResult(**done, reward=reward, error=error, seconds=t3 - t0, reset_sec=t1 - t0,
                             commands_sec=t2 - t1, reward_sec=t3 - t2, phases=phases)  # fmt: skip

    def close(self) -> None:
        self.factory.close()


class WorkerError(RuntimeError):
    """The HarborSpec worker died, hung or answered out of protocol."""


class HarborWorker:
    """``harbor_env_worker.py`` in the Harbor venv, fed one rollout per line (so the sides can interleave)."""

    def __init__(self, python: Path, docker_config: Path | None, dataset: Path, log: Path, timeout: float) -> None:
        self.timeout, self.log = timeout, log
        self._log_file = log.open("w", encoding="utf-8")  # Harbor's logging; a pipe nobody drains would block it
        self.proc = subprocess.Popen([str(python), str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log_file, text=True, env=_harbor_env(docker_config))  # fmt: skip
        self._send({"dataset": str(dataset)})
        self.task_dirs: list[str] = json.loads(self._read("TASKS"))["task_dirs"]

    def _send(self, payload: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(payload) + "\n")
            self.proc.stdin.flush()
        except OSError as e:
            raise WorkerError(self._died(f"could not be written to ({e})")) from None

    def _read(self, prefix: str) -> str:
        assert self.proc.stdout is not None
        timer = threading.Timer(self.timeout, self.proc.kill)  # a hung Harbor call ends the worker, not the run
        timer.start()
        try:
            for line in self.proc.stdout:
                if line.startswith(prefix + " "):
                    return line.split(" ", 1)[1]
        finally:
            timer.cancel()
        raise WorkerError(self._died(f"ended before its {prefix} line"))

    def _died(self, what: str) -> str:
        try:
            code: int | None = self.proc.wait(timeout=5)  # its stdout closed: it is exiting
        except subprocess.TimeoutExpired:
            code = None
        self._log_file.flush()
        tail = "\n".join(self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-15:])
        return f"the HarborSpec worker {what} (exit code {code}; per-call limit {self.timeout:g} s):\n{tail}"

    def run(self, item: Rollout) -> RolloutResult:
        self._send(item.model_dump())
        return RolloutResult.model_validate_json(self._read("RESULT"))

    def close(self) -> None:
        try:
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()  # EOF: the worker stops its last sandbox and exits
            self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self._log_file.close()


def harbor_skip_reason(python: Path, docker_config: Path | None) -> str | None:
    """Why the HarborSpec side cannot run here (None when it can): a missing venv, trl or harbor, or compose v2."""
    if not python.exists():
        return (f"no Harbor venv at {python} (a Python >= 3.12 venv with trl and harbor: scripts/harbor_side_venv.sh; "
                "or pass --harbor-python / set AUTOENV_HARBOR_PYTHON)")  # fmt: skip
    probe = subprocess.run([str(python), "-c", "import harbor, trl.experimental.harbor"], capture_output=True,
                           text=True, env={**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1"})  # fmt: skip
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return f"{python} cannot import harbor and trl.experimental.harbor: {last}"
    compose = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True,
                             env=_harbor_env(docker_config))  # fmt: skip
    if compose.returncode != 0:
        return (f"`docker compose` (v2 plugin, which Harbor's docker environment runs) is missing: "
                f"{(compose.stderr or compose.stdout).strip()[:200]} (see docs/benchmarks.md)")  # fmt: skip
    return None


def _harbor_env(docker_config: Path | None) -> dict[str, str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "TRL_EXPERIMENTAL_SILENCE": "1"}
    if docker_config is not None:
        env["DOCKER_CONFIG"] = str(docker_config)
    return env


def loadavg() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def measure(args: argparse.Namespace, work: Path) -> Report:
    from autoenvscaling.sandbox.docker import DockerBackend

    tasks = [Path(t) for t in args.tasks]
    if args.verifier_mode:
        tasks = with_verifier_mode(tasks, work / "tasks", args.verifier_mode)
    export = make_export(work, tasks)
    rows = load_rows(export).rows
    plan = scripted_rollouts(rows, args.rollouts)
    ours = Side(name="ours (SandboxTaskEnv, Docker sandbox)", load_before=loadavg())
    harbor = Side(name="TRL HarborSpec (Harbor's docker environment)")
    harbor.skipped = harbor_skip_reason(args.harbor_python, args.docker_config)
    harbor.load_before = ours.load_before
    ours_side = OurSide(DockerBackend(), rows, work)
    worker: HarborWorker | None = None
    try:
        if harbor.skipped is None:
            try:
                worker = HarborWorker(args.harbor_python, args.docker_config, export / "dataset",
                                      work / "harbor-worker.log", args.harbor_timeout)  # fmt: skip
            except WorkerError as e:
                harbor.skipped = str(e)
        for i, item in enumerate(plan):  # interleaved, alternating who goes first: load hits both sides alike
            ours_first = i % 2 == 0
            if ours_first:
                ours.results.append(ours_side.run(item))
            if worker is not None:
                try:
                    harbor.results.append(worker.run(item))
                except WorkerError as e:
                    harbor.skipped = str(e)
                    worker.close()
                    worker = None
            if not ours_first:
                ours.results.append(ours_side.run(item))
    finally:
        ours_side.close()
        if worker is not None:
            worker.close()
    ours.load_after = harbor.load_after = loadavg()
    ours.summary, harbor.summary = summarize("ours", ours.results), summarize("harbor", harbor.results)

    report = Report(tasks=[r.task_name for r in rows], verifier_mode=args.verifier_mode or "as declared",
                    rollouts_per_task=args.rollouts, ours=ours, harbor=harbor, parity=[])  # fmt: skip
    if harbor.results or harbor.skipped is None:
        report.parity = parity(plan, ours.results, harbor.results)
    else:  # no HarborSpec side: our rewards against the expected ones only
        report.parity = [f"#{i} {Path(p.task_dir).name} {p.kind}: ours {r.reward} ({r.error}), expected "
                         f"{EXPECTED[p.kind]:g}" for i, (p, r) in enumerate(zip(plan, ours.results, strict=True))
                         if r.reward != EXPECTED[p.kind]]  # fmt: skip
    if ours.summary and harbor.summary:
        report.ratio_median = harbor.summary.median_sec / ours.summary.median_sec
        report.ratio_mean = harbor.summary.mean_sec / ours.summary.mean_sec
        report.meets_target = report.ratio_median >= TARGET_RATIO
    return report


def print_report(report: Report) -> None:
    print(f"tasks: {', '.join(report.tasks)} (verifier mode: {report.verifier_mode}); {report.rollouts_per_task} "
          f"timed rollouts per task, {report.commands_per_rollout} commands each (+ an oracle and a do-nothing "
          "rollout per task)")  # fmt: skip
    print(f"{'side':<46} {'n':>3} {'median':>8} {'mean':>8} {'min':>7} {'max':>7} {'reset':>7} {'cmds':>7} "
          f"{'reward':>7} {'load':>10}")  # fmt: skip
    for side in (report.ours, report.harbor):
        if side.summary is None:
            print(f"{side.name:<46} skipped: {side.skipped or 'no timed rollout finished'}")
            continue
        s = side.summary
        load = f"{side.load_before or 0:.1f}-{side.load_after or 0:.1f}"
        print(f"{side.name:<46} {s.rollouts:>3} {s.median_sec:>7.2f}s {s.mean_sec:>7.2f}s {s.min_sec:>6.2f}s "
              f"{s.max_sec:>6.2f}s {s.reset_median_sec:>6.2f}s {s.commands_median_sec:>6.2f}s "
              f"{s.reward_median_sec:>6.2f}s {load:>10}")  # fmt: skip
        if s.phase_medians:
            print("  trial phases (median): " + ", ".join(f"{k} {v:.2f}s" for k, v in s.phase_medians.items()))
        if side.skipped:
            print(f"  {side.skipped}")
    if report.ratio_median is not None:
        verdict = "meets" if report.meets_target else "misses"
        print(f"HarborSpec / ours per rollout: {report.ratio_median:.1f}x (median), {report.ratio_mean:.1f}x (mean); "
              f"{verdict} the >= {report.target_ratio:g}x target")  # fmt: skip
    compared = "ours and HarborSpec" if report.harbor.results else "ours (against the expected rewards only)"
    if report.parity:
        print(f"reward parity FAILED ({compared}):")
        for line in report.parity:
            print(f"  {line}")
    else:
        n = len(report.ours.results)
        print(f"reward parity: all {n} rollouts identical ({compared}; oracle 1, nothing 0)")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rollouts", type=int, default=5, help="timed rollouts per task (default 5)")
    p.add_argument("--tasks", nargs="+", default=[str(t) for t in EXAMPLE_TASKS], help="task dirs to export")
    p.add_argument("--verifier-mode", choices=["shared", "separate"],
                   help="run copies of the tasks with this [verifier] environment_mode (HarborSpec's environment "
                   "always verifies in the agent's container; ours does what the task says)")  # fmt: skip
    p.add_argument("--harbor-python", type=Path,
                   default=Path(os.environ.get("AUTOENV_HARBOR_PYTHON") or DEFAULT_HARBOR_PYTHON))  # fmt: skip
    default_config = os.environ.get("AUTOENV_HARBOR_DOCKER_CONFIG") or (
        str(DEFAULT_DOCKER_CONFIG) if DEFAULT_DOCKER_CONFIG.is_dir() else None
    )
    p.add_argument("--docker-config", type=Path, default=Path(default_config) if default_config else None)
    p.add_argument("--harbor-timeout", type=float, default=600.0, help="seconds one HarborSpec call may take")
    p.add_argument("--json", type=Path, help="write the full report (every rollout) here")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-train-env-") as tmp:
        report = measure(args, Path(tmp))
    print_report(report)
    if args.json:
        args.json.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return 1 if report.parity else 0


if __name__ == "__main__":
    sys.exit(main())
