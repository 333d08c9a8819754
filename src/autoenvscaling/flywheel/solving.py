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
from pathlib import Path

from autoenvscaling.execution.executors import Executor, LocalExecutor
from autoenvscaling.execution.rundir import ResultsLog
from autoenvscaling.execution.runner import ItemRunner
from autoenvscaling.flywheel.crash import checkpoint
from autoenvscaling.flywheel.records import TaskAttempts
from autoenvscaling.roles.solve_run import AttemptRecord, SolveRun
from autoenvscaling.sandbox.base import SandboxBackend
from autoenvscaling.verify.trial_agents import TrialAgent

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
    executor: Executor | None = None,
    backend_name: str | None = None,
) -> list[TaskAttempts]:
    """Attempt each ``(key, task dir)`` ``attempts`` times; returns one record per item, in ``items`` order.

    Tasks run ``concurrency`` at once on local threads; each task's attempts run on ``executor`` (a Ray executor
    makes every attempt one Ray task).
    """
    stage_dir.mkdir(parents=True, exist_ok=True)
    runner = ItemRunner[tuple[str, Path], TaskAttempts](
        ResultsLog(stage_dir / "results.jsonl", TaskAttempts),
        item_key=lambda item: item[0],
        result_key=lambda rec: rec.key,
        executor=LocalExecutor("fw-solve"),
        concurrency=concurrency,
    )
    for rec in runner.resume(True).values():
        on_task(rec)

    def one(item: tuple[str, Path]) -> TaskAttempts:
        key, task_dir = item
        run_dir = stage_dir / "tasks" / key
        shutil.rmtree(run_dir, ignore_errors=True)
        run = SolveRun(
            run_dir,
            backend,
            agent_factory,
            attempts=attempts,
            concurrency=1 if executor is None or not executor.remote else attempts,
            aliases=aliases,
            executor=executor,
            backend_name=backend_name,
        )
        try:
            records, _ = run.run([task_dir], on_done=_on_attempt)
        except Exception as e:  # the task could not be loaded or run at all: that task's error only
            return TaskAttempts(key=key, task_path=str(task_dir), error=f"{type(e).__name__}: {e}")
        name = records[0].task_name if records else ""
        return TaskAttempts(key=key, task_path=str(task_dir), task_name=name, attempts=records)

    def finished(rec: TaskAttempts) -> None:
        on_task(rec)
        checkpoint("item")

    return runner.run(items, one, on_done=finished)


def _on_attempt(_rec: AttemptRecord) -> None:
    checkpoint("attempt")
