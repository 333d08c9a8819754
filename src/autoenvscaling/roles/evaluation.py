"""Evaluation on a Harbor dataset: pass@1 and pass@k with confidence intervals, from a solve run's attempts.

``autoenv eval`` and the flywheel's held-out stage both score attempts with ``eval_report`` (the attempts come from
``SolveRun`` in both). Per task, over its scored attempts (an attempt that ended in an infrastructure error has no
reward and is left out, as in ``summarize_task``): n attempts, c solved, pass@k by the unbiased estimator
(``pass_at_k``). The dataset's pass@k is the mean over tasks with at least k scored attempts.

Intervals (``confidence``, default 0.95):
- ``wilson`` (pass@1 only): the Wilson score interval of c/n pooled over every scored attempt. Attempts of one
  task are not independent, so with several attempts per task it is narrower than the truth; the bootstrap is not.
- ``bootstrap``: percentile interval of the mean over tasks, tasks resampled with replacement (``resamples``
  draws, a fixed seed, so a report is reproducible).
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from autoenvscaling.execution.rundir import write_atomic
from autoenvscaling.roles.solve_run import AttemptRecord, SolveRun, pass_at_k

REPORT_FILENAME = "eval.json"


class Interval(BaseModel):
    low: float
    high: float


class PassAt(BaseModel):
    k: int
    value: float | None  # None when no task has k scored attempts
    tasks: int  # tasks that count (at least k scored attempts)
    wilson: Interval | None = None  # k == 1 only
    bootstrap: Interval | None = None


class TaskEval(BaseModel):
    task_name: str
    task_path: str
    attempts: int
    errors: int
    solved: int
    mean_reward: float | None
    pass_at: dict[str, float | None]  # "1", "k" -> value (None: fewer than k scored attempts)


class EvalReport(BaseModel):
    dataset: str = ""
    run_dir: str = ""
    agent: str = ""
    attempts_per_task: int
    confidence: float
    tasks: list[TaskEval]
    attempts: int
    errors: int
    solved: int
    mean_reward: float | None
    pass_at: list[PassAt]
    notes: list[str] = Field(default_factory=list)


def wilson_interval(successes: int, n: int, z: float) -> Interval | None:
    if n == 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / denom
    return Interval(low=max(0.0, centre - half), high=min(1.0, centre + half))


def bootstrap_interval(values: Sequence[float], confidence: float, resamples: int, seed: int = 0) -> Interval | None:
    """Percentile interval of the mean of ``values`` (each value one task)."""
    if not values:
        return None
    rng = random.Random(seed)
    n = len(values)
    means = sorted(statistics.fmean(rng.choices(values, k=n)) for _ in range(resamples))
    tail = (1 - confidence) / 2
    lo = means[min(resamples - 1, int(tail * resamples))]
    hi = means[min(resamples - 1, max(0, int((1 - tail) * resamples) - 1))]
    return Interval(low=lo, high=hi)


def _z(confidence: float) -> float:
    return statistics.NormalDist().inv_cdf(0.5 + confidence / 2)


def eval_report(
    records: list[AttemptRecord],
    task_order: list[tuple[str, str]],
    ks: Sequence[int],
    *,
    attempts_per_task: int,
    confidence: float = 0.95,
    resamples: int = 2000,
) -> EvalReport:
    """Score ``records``; ``task_order`` is ``(task_path, task_name)`` per task (a task without records is listed;
    records of other tasks are left out)."""
    by_task: dict[str, list[AttemptRecord]] = {path: [] for path, _ in task_order}
    records = [r for r in records if r.task_path in by_task]  # a task not in the dataset (now) does not count
    for r in records:
        by_task[r.task_path].append(r)
    ks = sorted(set(ks))
    tasks: list[TaskEval] = []
    per_k: dict[int, list[float]] = {k: [] for k in ks}
    for path, name in task_order:
        recs = by_task[path]
        scored = [r for r in recs if r.reward is not None]
        n, c = len(scored), sum(r.solved for r in scored)
        values = {k: pass_at_k(n, c, k) if n >= k else None for k in ks}
        for k, v in values.items():
            if v is not None:
                per_k[k].append(v)
        tasks.append(
            TaskEval(
                task_name=recs[0].task_name if recs else name,
                task_path=path,
                attempts=len(recs),
                errors=len(recs) - n,
                solved=c,
                mean_reward=statistics.fmean(r.reward for r in scored if r.reward is not None) if scored else None,
                pass_at={str(k): v for k, v in values.items()},
            )
        )
    scored_all = [r for r in records if r.reward is not None]
    solved_all = sum(r.solved for r in scored_all)
    pass_at = [
        PassAt(
            k=k,
            value=statistics.fmean(per_k[k]) if per_k[k] else None,
            tasks=len(per_k[k]),
            wilson=wilson_interval(solved_all, len(scored_all), _z(confidence)) if k == 1 else None,
            bootstrap=bootstrap_interval(per_k[k], confidence, resamples),
        )
        for k in ks
    ]
    notes = [f"{t.task_name}: no scored attempt (errors only)" for t in tasks if t.attempts and t.errors == t.attempts]
    return EvalReport(
        attempts_per_task=attempts_per_task,
        confidence=confidence,
        tasks=tasks,
        attempts=len(records),
        errors=len(records) - len(scored_all),
        solved=solved_all,
        mean_reward=statistics.fmean(r.reward for r in scored_all if r.reward is not None) if scored_all else None,
        pass_at=pass_at,
        notes=notes,
    )


def default_ks(attempts: int) -> list[int]:
    """1, the powers of two below ``attempts``, and ``attempts``."""
    ks = {1, attempts}
    k = 2
    while k < attempts:
        ks.add(k)
        k *= 2
    return sorted(ks)


def write_report(report: EvalReport, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
    return path


def run_eval(
    run: SolveRun,
    task_dirs: list[Path],
    *,
    ks: Sequence[int],
    dataset: str,
    agent: str,
    resume: bool = False,
    confidence: float = 0.95,
    on_done: Callable[[AttemptRecord], None] = lambda _r: None,
) -> EvalReport:
    """Attempt every task ``run.attempts`` times on ``run`` (resumable), score, and write ``<run dir>/eval.json``."""
    records, _ = run.run(task_dirs, resume=resume, on_done=on_done)
    report = eval_report(
        records,
        [(str(t), t.name) for t in task_dirs],
        ks,
        attempts_per_task=run.attempts,
        confidence=confidence,
    )
    report.dataset, report.run_dir, report.agent = dataset, str(run.run_dir), agent
    write_report(report, run.run_dir / REPORT_FILENAME)
    return report
