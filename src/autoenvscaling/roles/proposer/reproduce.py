"""Blind reproduction: recorded expectations certify whatever the reference solution did, so an environment
whose tests hold recorded outputs is accepted only when a solver that sees the instruction and the environment
alone (no solution, no tests) reproduces them at least once in K attempts.

With ``one_shots`` (2 in a propose run), one-shot attempts come first: the same solver model, told to write
one script that does the whole task, run once and graded like any attempt (``agent.config.one_shot``); a
success is a reproduction, and only when they all fail do the K attempts of the agent loop run. They are blind
attempts like the others (the instruction and the inputs' first lines, never the solution or the tests), and
they are reported apart (``oneshot_rewards``).

Attempts stop at the first success. An attempt whose trial failed for infrastructure reasons (no reward) is
kept as ``None`` and counts neither as a reproduction nor as a failure to reproduce: it is run again, so a
verdict rests on ``attempts`` rewarded attempts, with up to ``attempts`` such reruns in all. When the reruns run
out before the attempts did, and nothing was reproduced, the result is an error: infrastructure failures never
become a rejection. A one-shot attempt without a reward is not run again.

``Reproductions`` runs a run's candidates and logs each result once. On a remote executor (Ray) one candidate's
attempts are one task (``RemoteReproduction``): the backend is made on the worker, the agent factory travels
(``RemoteSolverFactory``), and the trial dirs come back to the driver.
"""

from __future__ import annotations

import glob
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from autoenvscaling.agent.config import one_shot as one_shot_config
from autoenvscaling.execution.base import Executor
from autoenvscaling.execution.portable import Delivery, PortableWork, ship
from autoenvscaling.execution.rundir import ResultsLog
from autoenvscaling.execution.runner import ItemRunner
from autoenvscaling.roles.solver import SolverAgent
from autoenvscaling.sandbox.base import SandboxBackend
from autoenvscaling.sandbox.registry import shared_backend
from autoenvscaling.tasks import load_task
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.results import TrialResult, is_solved
from autoenvscaling.verify.trial import TrialRunner
from autoenvscaling.verify.trial_agents import TrialAgent


class Reproduction(BaseModel):
    task: str = ""  # the candidate dir's name
    oneshot_rewards: list[float | None] = Field(default_factory=list)  # the one-shot attempts', in order
    rewards: list[float | None] = Field(default_factory=list)  # the agent loop's attempts, in order
    tokens: int = 0
    wall_sec: float = 0.0
    error: str | None = None

    @property
    def reproduced(self) -> bool:
        return any(is_solved(r) for r in [*self.oneshot_rewards, *self.rewards])


def reproduction_attempts(r: Reproduction) -> str:
    """The attempts behind ``r``, in words (the progress lines of ``autoenv propose`` and the flywheel)."""
    shots = f"{len(r.oneshot_rewards)} one-shot" if r.oneshot_rewards else ""
    loop = f"{len(r.rewards)} in the loop" if r.rewards or not shots else ""
    return ", then ".join(p for p in (shots, loop) if p) + " attempt(s)"


def one_shot_agent(agent: TrialAgent) -> TrialAgent | None:
    """The one-shot variant of a blind solver agent (None for an agent that has no model loop)."""
    if not isinstance(agent, SolverAgent):
        return None
    return SolverAgent(agent.model, one_shot_config(agent.config))


def reproduce(
    task_dir: Path,
    agent_factory: Callable[[], TrialAgent],
    backend: SandboxBackend,
    trials_dir: Path,
    *,
    attempts: int,
    run_id: str | None = None,
    builder: EnvironmentBuilder | None = None,
    agent_timeout_sec: float | None = None,
    one_shots: int = 0,
) -> Reproduction:
    """Up to ``attempts`` blind solver trials on ``task_dir``, after up to ``one_shots`` one-shot ones;
    ``agent_timeout_sec`` replaces the task's own agent limit (written for a fast endpoint; a small model on the
    CPU needs longer for the same turns)."""
    started = time.perf_counter()
    out = Reproduction(task=task_dir.name)
    task = load_task(task_dir)
    runner = TrialRunner(backend, builder or EnvironmentBuilder(backend), run_id=run_id, prewarm=False)
    try:
        for j in range(1, one_shots + 1):
            shot = one_shot_agent(agent_factory())
            if shot is None or out.reproduced:
                break
            trial_dir = trials_dir / f"{task_dir.name}__oneshot-{j}"
            res = runner.run(task, shot, trial_dir, agent_timeout_sec=agent_timeout_sec)
            out.tokens += _tokens(res)
            out.oneshot_rewards.append(res.reward)
        i = rewarded = 0
        while not out.reproduced and rewarded < attempts and i - rewarded < attempts:
            i += 1
            trial_dir = trials_dir / f"{task_dir.name}__blind-{i}"
            res = runner.run(task, agent_factory(), trial_dir, agent_timeout_sec=agent_timeout_sec)
            out.tokens += _tokens(res)
            out.rewards.append(res.reward)
            rewarded += res.reward is not None
            if res.reward is None and res.exception_info is not None:
                out.error = f"{res.exception_info.exception_type}: {res.exception_info.exception_message}"
            if out.reproduced:
                break
    finally:
        runner.close()
    if out.reproduced or rewarded >= attempts:
        out.error = None
    else:
        last = out.error or "a trial ended without a reward"
        out.error = (
            f"only {rewarded} of {attempts} blind attempts got a reward; last error: {last}" if rewarded else last
        )
    out.wall_sec = time.perf_counter() - started
    return out


def _tokens(res: TrialResult) -> int:
    ctx = res.agent_result
    return 0 if ctx is None else (ctx.n_input_tokens or 0) + (ctx.n_output_tokens or 0)


@dataclass(frozen=True)
class RemoteReproduction:
    """One candidate's blind attempts on a worker (a Ray task); ``agent_factory`` must pickle."""

    backend: str
    agent_factory: Callable[[], TrialAgent]
    attempts: int
    run_id: str | None = None
    agent_timeout_sec: float | None = None
    one_shots: int = 0

    def __call__(self, task_dir: Path, trials_dir: Path, _extra: str) -> Reproduction:
        return reproduce(
            task_dir,
            self.agent_factory,
            shared_backend(self.backend),
            trials_dir,
            attempts=self.attempts,
            run_id=self.run_id,
            agent_timeout_sec=self.agent_timeout_sec,
            one_shots=self.one_shots,
        )


class Reproductions:
    """The blind attempts of a run's candidates, each logged once in ``trials_dir/results.jsonl`` and kept in
    ``done`` by candidate name: one candidate at a time here, or one task each on a remote executor (its workers
    make their own backend and solver; the trial dirs come back here)."""

    def __init__(
        self,
        trials_dir: Path,
        agent_factory: Callable[[], TrialAgent],
        backend: SandboxBackend,
        *,
        attempts: int,
        run_id: str | None = None,
        agent_timeout_sec: float | None = None,
        executor: Executor | None = None,
        backend_name: str | None = None,
        resume: bool = False,
        one_shots: int = 0,
    ) -> None:
        """``resume``: the results already in ``trials_dir/results.jsonl`` stand (a resumed propose run)."""
        self.trials_dir = trials_dir
        self.agent_factory = agent_factory
        self.backend = backend
        self.attempts = attempts
        self.one_shots = one_shots
        self.run_id = run_id
        self.agent_timeout_sec = agent_timeout_sec
        self.backend_name = backend_name  # None: backend.name
        self.runner: ItemRunner[Path, Reproduction] = ItemRunner(
            ResultsLog(trials_dir / "results.jsonl", Reproduction),
            item_key=lambda task_dir: task_dir.name,
            result_key=lambda r: r.task,
            executor=executor,
        )
        self.runner.resume(resume)

    @property
    def done(self) -> dict[str, Reproduction]:
        return self.runner.done

    def run(self, candidates: list[Path]) -> None:
        """The attempts of each candidate not yet in ``done`` (from scratch: an earlier try's trial dirs go)."""
        self.trials_dir.mkdir(parents=True, exist_ok=True)
        for task_dir in self.runner.pending(candidates):
            for pattern in ("__blind-*", "__oneshot-*"):
                for old in self.trials_dir.glob(f"{glob.escape(task_dir.name)}{pattern}"):
                    shutil.rmtree(old, ignore_errors=True)
        if not self.runner.executor.remote:
            self.runner.run(candidates, self._here, lost=_lost)
            return
        name = self.backend_name or self.backend.name
        remote = RemoteReproduction(
            name, self.agent_factory, self.attempts, self.run_id, self.agent_timeout_sec, self.one_shots
        )
        trials = self.trials_dir
        self.runner.run(
            candidates,
            PortableWork(remote),
            send=lambda task_dir: ship(str(task_dir), task_dir, trials),
            land=_land,
            lost=_lost,
        )

    def _here(self, task_dir: Path) -> Reproduction:
        return reproduce(
            task_dir,
            self.agent_factory,
            self.backend,
            self.trials_dir,
            attempts=self.attempts,
            run_id=self.run_id,
            agent_timeout_sec=self.agent_timeout_sec,
            one_shots=self.one_shots,
        )


def _land(delivery: Delivery[Reproduction]) -> Reproduction:
    return delivery.land(Reproduction)


def _lost(task_dir: Path, why: str) -> Reproduction:
    """A candidate whose blind attempts the executor lost for good: an infrastructure error, never a rejection."""
    return Reproduction(task=task_dir.name, error=f"ExecutorError: {why}")
