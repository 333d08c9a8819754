"""Blind reproduction: recorded expectations certify whatever the reference solution did, so an environment
whose tests hold recorded outputs is accepted only when a solver that sees the instruction and the environment
alone (no solution, no tests) reproduces them at least once in K attempts.

Attempts stop at the first success. An attempt whose trial failed for infrastructure reasons (no reward) is
kept as ``None`` and counts neither as a reproduction nor as a failure to reproduce: it is run again, so a
verdict rests on ``attempts`` rewarded attempts, with up to ``attempts`` such reruns in all. When the reruns run
out before the attempts did, and nothing was reproduced, the result is an error: infrastructure failures never
become a rejection.

On a remote executor (Ray) one candidate's attempts are one task (``RemoteReproduction``): the backend is made
on the worker, the agent factory travels (``RemoteSolverFactory``), and the trial dirs come back to the driver.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from autoenvscaling.sandbox.base import SandboxBackend
from autoenvscaling.sandbox.registry import shared_backend
from autoenvscaling.tasks import load_task
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.results import is_solved
from autoenvscaling.verify.trial import TrialRunner
from autoenvscaling.verify.trial_agents import TrialAgent


class Reproduction(BaseModel):
    task: str = ""  # the candidate dir's name
    rewards: list[float | None] = Field(default_factory=list)
    tokens: int = 0
    wall_sec: float = 0.0
    error: str | None = None

    @property
    def reproduced(self) -> bool:
        return any(is_solved(r) for r in self.rewards)


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
) -> Reproduction:
    """Up to ``attempts`` blind solver trials on ``task_dir``; ``agent_timeout_sec`` replaces the task's own agent
    limit (written for a fast endpoint; a small model on the CPU needs longer for the same turns)."""
    started = time.perf_counter()
    out = Reproduction(task=task_dir.name)
    task = load_task(task_dir)
    runner = TrialRunner(backend, builder or EnvironmentBuilder(backend), run_id=run_id, prewarm=False)
    try:
        i = rewarded = 0
        while rewarded < attempts and i - rewarded < attempts:
            i += 1
            trial_dir = trials_dir / f"{task_dir.name}__blind-{i}"
            res = runner.run(task, agent_factory(), trial_dir, agent_timeout_sec=agent_timeout_sec)
            ctx = res.agent_result
            if ctx is not None:
                out.tokens += (ctx.n_input_tokens or 0) + (ctx.n_output_tokens or 0)
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


@dataclass(frozen=True)
class RemoteReproduction:
    """One candidate's blind attempts on a worker (a Ray task); ``agent_factory`` must pickle."""

    backend: str
    agent_factory: Callable[[], TrialAgent]
    attempts: int
    run_id: str | None = None
    agent_timeout_sec: float | None = None

    def __call__(self, task_dir: Path, trials_dir: Path, _extra: str) -> Reproduction:
        return reproduce(
            task_dir,
            self.agent_factory,
            shared_backend(self.backend),
            trials_dir,
            attempts=self.attempts,
            run_id=self.run_id,
            agent_timeout_sec=self.agent_timeout_sec,
        )
