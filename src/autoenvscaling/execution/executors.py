"""Where work runs: ``LocalExecutor`` (threads in this process, the default) or ``RayExecutor`` (a Ray cluster).

An executor only maps a function over items and hands results back as they finish; it never writes the run
dir. ``remote`` says whether the work may run on a machine that does not share this process's disk: then the
caller ships its inputs and carries its outputs back (``portable``), and the function and items must pickle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

from autoenvscaling.errors import UserInputError

I = TypeVar("I")  # noqa: E741 - an item
R = TypeVar("R")

ExecutorKind = Literal["local", "ray"]


class ExecutorConfig(BaseModel):
    kind: ExecutorKind = Field(default="local", description="local: threads in this process; ray: a Ray cluster")
    address: str | None = Field(
        default=None,
        description="ray: 'auto' (the cluster this node belongs to), HOST:PORT, or None (start Ray on this machine)",
    )
    resource: str = Field(
        default="sandbox_slot",
        description="ray: the custom resource each node declares (`ray start --resources`); one per trial in flight, "
        "so a node's value caps its Docker concurrency",
    )
    max_retries: int = Field(
        default=3, ge=0, description="ray: reruns of a trial whose worker or node died (a trial's own error is final)"
    )
    in_flight: int | None = Field(
        default=None, ge=1, description="ray: tasks submitted at once (None: 2x the cluster's resource, at least 2)"
    )


class Executor(Protocol):
    name: str
    remote: bool

    def map_unordered(self, fn: Callable[[I], R], items: Sequence[I], concurrency: int) -> Iterator[R]:
        """``fn(item)`` for every item, yielded as each finishes. An exception from ``fn`` is raised here."""
        ...

    def close(self) -> None: ...


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
