"""The executor contract: ``ExecutorConfig`` (which executor, and how a Ray one connects) and the ``Executor``
protocol every executor implements.

It sits below both executors (``executors``: local threads and ``get_executor``; ``ray_executor``), so the
factory can import the Ray executor without the Ray executor importing the factory's module back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

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
