"""Where work runs: ``LocalExecutor`` (threads in this process, the default) or ``RayExecutor`` (a Ray cluster).

An executor only maps a function over items and hands results back as they finish; it never writes the run
dir. ``remote`` says whether the work may run on a machine that does not share this process's disk: then the
caller ships its inputs and carries its outputs back (``portable``), and the function and items must pickle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TypeVar

from autoenvscaling.errors import UserInputError
from autoenvscaling.execution.base import Executor, ExecutorConfig, ExecutorError, ExecutorKind, Lost

__all__ = ["Executor", "ExecutorConfig", "ExecutorError", "ExecutorKind", "LocalExecutor", "Lost", "get_executor"]

I = TypeVar("I")  # noqa: E741 - an item
R = TypeVar("R")


class LocalExecutor:
    """A thread pool of ``concurrency`` workers in this process (trials mostly wait on containers and models)."""

    name = "local"
    remote = False

    def __init__(self, thread_name: str = "run") -> None:
        self.thread_name = thread_name

    def map_unordered(self, fn: Callable[[I], R], items: Sequence[I], concurrency: int) -> Iterator[R]:
        if not items:
            return
        pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix=self.thread_name)
        try:
            futures = [pool.submit(fn, item) for item in items]
            for fut in as_completed(futures):
                yield fut.result()
        finally:  # the caller stopped (an error, Ctrl-C): items not started yet are not started
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        return None


def get_executor(config: ExecutorConfig | None = None, *, thread_name: str = "run") -> Executor:
    """The executor ``config`` names; ``--executor ray`` without Ray installed is a one-line error."""
    config = config or ExecutorConfig()
    if config.kind == "local":
        return LocalExecutor(thread_name)
    if config.kind == "ray":
        from autoenvscaling.execution.ray_executor import RayExecutor

        return RayExecutor(config)
    raise UserInputError(f"unknown executor {config.kind!r}: use local or ray")
