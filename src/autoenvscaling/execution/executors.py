"""Where work runs: ``LocalExecutor`` (threads in this process, the default) or ``RayExecutor`` (a Ray cluster).

An executor only maps a function over items and hands results back in batches as they finish; it never writes
the run dir. ``remote`` says whether the work may run on a machine that does not share this process's disk: then the
caller ships its inputs and carries its outputs back (``portable``), and the function and items must pickle.
"""

from __future__ import annotations

import contextlib
import queue
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from autoenvscaling.errors import UserInputError
from autoenvscaling.execution.base import Executor, ExecutorConfig, ExecutorError, ExecutorKind, Lost, each
from autoenvscaling.stopping import clear_stop, request_stop

__all__ = [
    "Executor",
    "ExecutorConfig",
    "ExecutorError",
    "ExecutorKind",
    "LocalExecutor",
    "Lost",
    "each",
    "get_executor",
]

I = TypeVar("I")  # noqa: E741 - an item
R = TypeVar("R")


class LocalExecutor:
    """A thread pool of ``concurrency`` workers in this process (trials mostly wait on containers and models)."""

    name = "local"
    remote = False

    def __init__(self, thread_name: str = "run") -> None:
        self.thread_name = thread_name

    def map_batches(self, fn: Callable[[I], R], items: Sequence[I], concurrency: int) -> Iterator[list[R]]:
        if not items:
            return
        pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix=self.thread_name)
        finished: queue.SimpleQueue[Future[R]] = queue.SimpleQueue()  # each future once, as it finishes
        interrupted = False
        try:
            for item in items:
                pool.submit(fn, item).add_done_callback(finished.put)
            left = len(items)
            while left:
                done = [finished.get()]
                with contextlib.suppress(queue.Empty):
                    while True:
                        done.append(finished.get_nowait())
                left -= len(done)
                failed = next((f for f in done if f.exception() is not None), None)
                batch = [f.result() for f in done if f.exception() is None]
                if batch:
                    yield batch
                if failed is not None:
                    failed.result()  # raises the item's exception
        except KeyboardInterrupt:  # the running items stop at their next model call (stopping.py)
            interrupted = True
            request_stop()
            raise
        finally:  # the caller stopped (an error, Ctrl-C): items not started yet are not started
            pool.shutdown(wait=True, cancel_futures=True)  # a second Ctrl-C here leaves the stop request set
            if interrupted:
                clear_stop()

    def map_unordered(self, fn: Callable[[I], R], items: Sequence[I], concurrency: int) -> Iterator[R]:
        """``map_batches``, one result at a time."""
        return each(self.map_batches(fn, items, concurrency))

    def close(self) -> None:
        return None


@contextlib.contextmanager
def results_of(results: Iterator[R]) -> Iterator[Iterator[R]]:
    """An executor's results, for a loop whose body may be where Ctrl-C lands: the running items are then asked to
    stop (``stopping.py``) before the executor waits for them, as when the interrupt lands inside the executor."""
    try:
        yield results
    except KeyboardInterrupt:
        request_stop()
        close = getattr(results, "close", None)
        if close is not None:
            close()  # the executor's own cleanup: it waits for its running items, which now stop early
        clear_stop()  # not after a second Ctrl-C during that wait: the items still running must stop too
        raise


def get_executor(config: ExecutorConfig | None = None, *, thread_name: str = "run") -> Executor:
    """The executor ``config`` names; ``--executor ray`` without Ray installed is a one-line error."""
    config = config or ExecutorConfig()
    if config.kind == "local":
        return LocalExecutor(thread_name)
    if config.kind == "ray":
        from autoenvscaling.execution.ray_executor import RayExecutor

        return RayExecutor(config)
    raise UserInputError(f"unknown executor {config.kind!r}: use local or ray")
