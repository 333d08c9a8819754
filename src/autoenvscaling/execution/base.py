"""The executor contract: ``ExecutorConfig`` (which executor, and how a Ray one connects), the ``Executor``
protocol every executor implements (``each`` flattens its batches), and ``Lost``: what an executor yields for an
item it gave up on.

It sits below both executors (``executors``: local threads and ``get_executor``; ``ray_executor``), so the
factory can import the Ray executor without the Ray executor importing the factory's module back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

from autoenvscaling.errors import AutoEnvError

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
    items_per_task: int | None = Field(
        default=None,
        ge=1,
        description="ray: trials one Ray task runs in turn (None: 1 until each slot has 64 trials or more to run, "
        "then up to 8, so the driver pays Ray's per-task cost once per few trials; a retry reruns the task's trials)",
    )


class ExecutorError(AutoEnvError):
    """The executor lost work for good (a task's retries ran out) or cannot run it at all."""


@dataclass(frozen=True)
class Lost:
    """An item whose work never finished: the process or node running it died, every time its retries allowed.

    Infrastructure, not the item's result: the caller records it as the item's error (``ItemRunner``'s ``lost``).
    """

    index: int  # the item's position in the ``items`` given to ``map_unordered``
    reason: str


class Executor(Protocol):
    name: str
    remote: bool

    def map_batches(self, fn: Callable[[I], R], items: Sequence[I], concurrency: int) -> Iterator[list[R | Lost]]:
        """``fn(item)`` for every item, handed back in batches as they finish: each batch is every result that
        finished since the last batch was taken (at least one), so a caller logs a batch with one fsync. An
        exception from ``fn`` is raised after the batch of the results that finished with it; an item whose worker
        died more often than the executor retries comes back as ``Lost``."""
        ...

    def close(self) -> None: ...


def each(batches: Iterator[list[R]]) -> Iterator[R]:
    """``map_batches``'s results one by one; closing this closes the executor's iterator (its cleanup runs)."""
    try:
        for batch in batches:
            yield from batch
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()
