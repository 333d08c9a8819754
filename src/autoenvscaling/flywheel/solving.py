"""Solver attempts on a list of tasks, one ``SolveRun`` per task, resumable per task.

Used by the solve, calibrate and evaluate stages. Each task gets ``<stage>/tasks/<key>/`` (a solve run dir:
results.jsonl, trials/<task>__<n>/...). When all its attempts are done, one ``TaskAttempts`` line goes to
``<stage>/results.jsonl``. A resumed stage skips the tasks listed there and redoes any other task's attempts
from scratch: a task's attempts are always made together, so a resumed stage draws the same samples as an
uninterrupted one from a scripted model, and a real model loses at most one task's attempts.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from autoenvscaling.flywheel.crash import checkpoint
from autoenvscaling.flywheel.records import TaskAttempts
from autoenvscaling.roles.solve_run import AttemptRecord, SolveRun
from autoenvscaling.sandbox.base import SandboxBackend
from autoenvscaling.verify.agents import TrialAgent
from autoenvscaling.verify.runlog import ResultsLog

OnTask = Callable[[TaskAttempts], None]


def solve_tasks(
    stage_dir: Path,
    items: list[tuple[str, Path]],
    *,
    backend: SandboxBackend,
    agent_factory: Callable[[], TrialAgent],
    attempts: int,
    concurrency: int = 1,
    aliases: dict[str, str] | None = None,
    on_task: OnTask = lambda _t: None,
) -> list[TaskAttempts]:
    """Attempt each ``(key, task dir)`` ``attempts`` times; returns one record per item, in ``items`` order."""
    stage_dir.mkdir(parents=True, exist_ok=True)
    log = ResultsLog(stage_dir / "results.jsonl", TaskAttempts)
    done = {r.key: r for r in log.load()}
    for rec in done.values():
        on_task(rec)
    todo = [(k, p) for k, p in items if k not in done]

    def one(key: str, task_dir: Path) -> TaskAttempts:
        run_dir = stage_dir / "tasks" / key
        shutil.rmtree(run_dir, ignore_errors=True)
        run = SolveRun(run_dir, backend, agent_factory, attempts=attempts, concurrency=1, aliases=aliases)
        try:
            records, _ = run.run([task_dir], on_done=_on_attempt)
        except Exception as e:  # the task could not be loaded or run at all: that task's error only
            return TaskAttempts(key=key, task_path=str(task_dir), error=f"{type(e).__name__}: {e}")
        name = records[0].task_name if records else ""
        return TaskAttempts(key=key, task_path=str(task_dir), task_name=name, attempts=records)

    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="fw-solve") as pool:
        futures = [pool.submit(one, k, p) for k, p in todo]
        for fut in as_completed(futures):
            rec = fut.result()
            log.append(rec)
            done[rec.key] = rec
            on_task(rec)
            checkpoint("item")
    return [done[k] for k, _ in items]


def _on_attempt(_rec: AttemptRecord) -> None:
    checkpoint("attempt")
