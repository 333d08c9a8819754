"""A solve run: N attempts per task, each a fresh trial; results.jsonl, resume, and a per-task summary.

Attempts run on the execution layer's item runner (key: task path and attempt number), on local threads or, with
a remote executor, one Ray task per attempt whose trial dir comes back to this process.

Run dir::

    runs/solve-<time>/
      config.resolved.toml
      results.jsonl                  one AttemptRecord per finished attempt
      summary.json                   per-task pass@1 / pass@k, tokens, cost, wall
      trials/<task>__<n>/            result.json, agent/trajectory.json, verifier/
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from autoenvscaling.execution.executors import Executor
from autoenvscaling.execution.portable import Delivery, PortableWork, Shipper
from autoenvscaling.execution.rundir import ResultsLog, write_atomic, write_resolved_config
from autoenvscaling.execution.runner import ItemRunner
from autoenvscaling.sandbox.base import SandboxBackend
from autoenvscaling.sandbox.registry import shared_backend
from autoenvscaling.tasks import load_task
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.results import TrialResult, is_solved
from autoenvscaling.verify.trial import TrialRunner
from autoenvscaling.verify.trial_agents import TrialAgent


class AttemptRecord(BaseModel):
    task_name: str
    task_path: str
    attempt: int
    trial_dir: str
    reward: float | None  # the scalar (verify.results.scalar_reward) of ``rewards``
    rewards: dict[str, float] | None = None  # every key the tests wrote (reward.json)
    error: str | None = None
    exit_reason: str | None = None
    turns: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    wall_sec: float = 0.0

    @property
    def solved(self) -> bool:
        return is_solved(self.reward)

    @classmethod
    def from_trial(cls, task_path: Path, attempt: int, trial_dir: Path, res: TrialResult) -> AttemptRecord:
        ctxs = res.agent_results  # one, or one per step of a multi-step task: their sums
        meta: dict[str, Any] = ctxs[-1].metadata if ctxs else {}
        err = res.exception_info
        wall = (res.finished_at - res.started_at).total_seconds() if res.finished_at and res.started_at else 0.0
        return cls(
            task_name=res.task_name,
            task_path=str(task_path),
            attempt=attempt,
            trial_dir=str(trial_dir),
            reward=res.reward,
            rewards=res.rewards,
            error=f"{err.exception_type}: {err.exception_message}" if err and res.reward is None else None,
            exit_reason=str(meta["exit_reason"]) if "exit_reason" in meta else None,
            turns=sum(int(c.metadata.get("turns", 0)) for c in ctxs),
            input_tokens=sum(c.n_input_tokens or 0 for c in ctxs),
            cached_tokens=sum(c.n_cache_tokens or 0 for c in ctxs),
            output_tokens=sum(c.n_output_tokens or 0 for c in ctxs),
            cost_usd=sum(c.cost_usd or 0.0 for c in ctxs),
            wall_sec=wall,
        )


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n scored attempts with c successes (Chen et al., 2021)."""
    if n == 0 or k > n:
        return float("nan")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def mean_per_key(rewards: list[dict[str, float]]) -> dict[str, float]:
    """Harbor's mean over attempts, per reward key (a key an attempt did not write counts 0 for it)."""
    keys = sorted({k for r in rewards for k in r})
    return {k: statistics.fmean(r.get(k, 0.0) for r in rewards) for k in keys} if rewards else {}


class TaskSummary(BaseModel):
    task_name: str
    attempts: int
    errors: int
    solved: int
    mean_reward: float | None
    mean_rewards: dict[str, float] = Field(default_factory=dict)  # per key; a key an attempt lacks counts 0
    pass_at_1: float | None
    pass_at_k: float | None
    k: int
    mean_turns: float
    tokens: int
    cost_usd: float
    wall_sec: float


def summarize_task(name: str, records: list[AttemptRecord]) -> TaskSummary:
    scored = [r for r in records if r.reward is not None]
    solved = sum(r.solved for r in scored)
    n = len(scored)
    return TaskSummary(
        task_name=name,
        attempts=len(records),
        errors=len(records) - n,
        solved=solved,
        mean_reward=statistics.fmean(r.reward for r in scored if r.reward is not None) if scored else None,
        mean_rewards=mean_per_key([r.rewards or {"reward": r.reward or 0.0} for r in scored]),
        pass_at_1=pass_at_k(n, solved, 1) if n else None,
        pass_at_k=pass_at_k(n, solved, n) if n else None,
        k=n,
        mean_turns=statistics.fmean(r.turns for r in records) if records else 0.0,
        tokens=sum(r.input_tokens + r.output_tokens for r in records),
        cost_usd=sum(r.cost_usd for r in records),
        wall_sec=sum(r.wall_sec for r in records),
    )


def _attempt_key(rec: AttemptRecord) -> str:
    return f"{rec.task_path}#{rec.attempt}"


def _item_key(item: tuple[Path, int]) -> str:
    return f"{item[0]}#{item[1]}"


@dataclass(frozen=True)
class RemoteAttempt:
    """One attempt on a worker (a Ray task): the backend is made there by name; ``agent_factory`` must pickle."""

    backend: str
    agent_factory: Callable[[], TrialAgent]
    run_id: str
    aliases: dict[str, str] = field(default_factory=dict)

    def __call__(self, task_dir: Path, trial_dir: Path, attempt: str) -> AttemptRecord:
        backend = shared_backend(self.backend)
        runner = TrialRunner(backend, EnvironmentBuilder(backend, aliases=self.aliases), run_id=self.run_id)
        try:
            res = runner.run(load_task(task_dir), self.agent_factory(), trial_dir)
        finally:
            runner.close()
        return AttemptRecord.from_trial(task_dir, int(attempt), trial_dir, res)


def _land(delivery: Delivery[AttemptRecord]) -> AttemptRecord:
    return delivery.land(AttemptRecord)


class SolveRun:
    def __init__(
        self,
        run_dir: Path,
        backend: SandboxBackend,
        agent_factory: Callable[[], TrialAgent],
        *,
        attempts: int = 1,
        concurrency: int = 1,
        aliases: dict[str, str] | None = None,
        resolved_config: dict[str, Any] | None = None,
        executor: Executor | None = None,
        backend_name: str | None = None,
    ) -> None:
        """``backend_name`` (default ``backend.name``) is how a remote executor's workers make their backend."""
        self.run_dir = run_dir
        self.backend = backend
        self.agent_factory = agent_factory
        self.attempts = attempts
        self.concurrency = max(1, concurrency)
        self.aliases = dict(aliases or {})
        self.builder = EnvironmentBuilder(backend, aliases=aliases)
        self.runner = TrialRunner(backend, self.builder, run_id=run_dir.name)
        self.log = ResultsLog(run_dir / "results.jsonl", AttemptRecord)
        self.resolved_config = resolved_config or {}
        self.executor = executor
        self.backend_name = backend_name or backend.name

    def run(
        self,
        task_dirs: list[Path],
        *,
        resume: bool = False,
        on_done: Callable[[AttemptRecord], None] = lambda _r: None,
    ) -> tuple[list[AttemptRecord], list[TaskSummary]]:
        trials = self.run_dir / "trials"
        trials.mkdir(parents=True, exist_ok=True)
        items = ItemRunner[tuple[Path, int], AttemptRecord](
            self.log,
            item_key=_item_key,
            result_key=_attempt_key,
            executor=self.executor,
            concurrency=self.concurrency,
        )
        finished = set(items.resume(resume))
        if resume:
            self.backend.cleanup(self.run_dir.name)
        write_resolved_config(self.run_dir, self.resolved_config)
        tasks = {t: load_task(t) for t in task_dirs}
        jobs = [(t, i) for t in task_dirs for i in range(1, self.attempts + 1)]

        def trial_dir(item: tuple[Path, int]) -> Path:
            return trials / f"{tasks[item[0]].name}__{item[1]}"

        def lost(item: tuple[Path, int], why: str) -> AttemptRecord:  # infrastructure: an error, never a reward
            task_dir, i = item
            return AttemptRecord(
                task_name=tasks[task_dir].name,
                task_path=str(task_dir),
                attempt=i,
                trial_dir=str(trial_dir(item)),
                reward=None,
                error=f"ExecutorError: {why}",
            )

        def attempt(item: tuple[Path, int]) -> AttemptRecord:
            task_dir, i = item
            tdir = trial_dir(item)
            shutil.rmtree(tdir, ignore_errors=True)  # a crashed attempt is redone from scratch
            more = i < self.attempts and f"{task_dir}#{i + 1}" not in finished
            res = self.runner.run(tasks[task_dir], self.agent_factory(), tdir, prewarm_next=more)
            return AttemptRecord.from_trial(task_dir, i, tdir, res)

        started = time.perf_counter()
        try:
            if items.executor.remote:
                for item in items.pending(jobs):
                    shutil.rmtree(trial_dir(item), ignore_errors=True)
                ship = Shipper()
                remote = PortableWork(
                    RemoteAttempt(self.backend_name, self.agent_factory, self.run_dir.name, self.aliases)
                )
                records = items.run(
                    jobs,
                    remote,
                    send=lambda it: ship(_item_key(it), it[0], trial_dir(it), str(it[1])),
                    land=_land,
                    lost=lost,
                    on_done=on_done,
                )
            else:
                records = items.run(jobs, attempt, on_done=on_done)
        finally:
            self.runner.close()
        by_task: dict[str, list[AttemptRecord]] = {}
        for r in records:  # one pass: a scan of all records per task is quadratic at 10,000 trials
            by_task.setdefault(r.task_path, []).append(r)
        summaries = [summarize_task(tasks[t].name, by_task.get(str(t), [])) for t in task_dirs]
        summary = {
            "run_dir": str(self.run_dir),
            "wall_sec": time.perf_counter() - started,
            "tasks": [s.model_dump() for s in summaries],
        }
        write_atomic(self.run_dir / "summary.json", json.dumps(summary, indent=2))
        return records, summaries
