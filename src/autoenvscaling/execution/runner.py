"""One resumable item runner: every run of many items (attempts, validations, generations, flywheel tasks).

Each item has a key; so does each result. Results are appended to the results log by this process only, once
per key, as they finish; a resumed run loads the log and skips the items whose key is there. The work itself
runs on an executor (threads here, or a Ray cluster), which only hands results back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, cast, overload

from pydantic import BaseModel

from autoenvscaling.execution.base import Executor, ExecutorError, Lost
from autoenvscaling.execution.executors import LocalExecutor, results_of
from autoenvscaling.execution.rundir import ResultsLog

I = TypeVar("I")  # noqa: E741 - an item
R = TypeVar("R", bound=BaseModel)


def _nothing(_r: object) -> None:
    return None


class _Sent(Sequence[Any]):
    """``send`` applied to each item when the executor takes it (so 10,000 archives are not held at once)."""

    def __init__(self, items: Sequence[Any], send: Callable[[Any], Any]) -> None:
        self.items = items
        self.send = send

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self.send(x) for x in self.items[i]]
        return self.send(self.items[i])


class ItemRunner(Generic[I, R]):
    """``run(items, work)``: ``work(item)`` for each item not yet done, its result appended once under its key."""

    def __init__(
        self,
        log: ResultsLog[R],
        *,
        item_key: Callable[[I], str],
        result_key: Callable[[R], str],
        executor: Executor | None = None,
        concurrency: int = 1,
    ) -> None:
        self.log = log
        self.item_key = item_key
        self.result_key = result_key
        self.executor: Executor = executor or LocalExecutor()
        self.concurrency = max(1, concurrency)
        self.done: dict[str, R] = {}

    def resume(self, resume: bool) -> dict[str, R]:
        """The results already logged (``resume``), or a fresh log. Call before ``pending``/``run``."""
        if resume:
            self.done = {self.result_key(r): r for r in self.log.load()}
        else:
            self.log.reset()
            self.done = {}
        return self.done

    def pending(self, items: Sequence[I]) -> list[I]:
        """The items without a logged result (the first of any two items with one key)."""
        seen: set[str] = set()
        todo: list[I] = []
        for item in items:
            key = self.item_key(item)
            if key not in self.done and key not in seen:
                seen.add(key)
                todo.append(item)
        return todo

    def run(
        self,
        items: Sequence[I],
        work: Callable[[Any], Any],
        *,
        send: Callable[[I], Any] | None = None,
        land: Callable[[Any], R] | None = None,
        lost: Callable[[I, str], R] | None = None,
        on_done: Callable[[R], None] = _nothing,
    ) -> list[R]:
        """Run the pending items; returns the result of every item that has one, in ``items`` order.

        ``work(item)`` returns the result. Remote work gets ``send(item)`` instead (what travels: an archive of
        the inputs) and returns what ``land`` turns into the result here (writing its files into the run dir).
        An item the executor lost for good (its worker died every time it was retried) gets ``lost(item, why)``,
        its infrastructure error, logged like any result, and the other items go on; without ``lost`` the run
        stops with ``ExecutorError``.
        """
        pending = self.pending(items)
        todo: Sequence[Any] = pending if send is None else _Sent(pending, send)
        with results_of(self.executor.map_batches(work, todo, self.concurrency)) as batches:
            for batch in batches:
                self._take(batch, pending, land, lost, on_done)
        out: list[R] = []
        listed: set[str] = set()
        for item in items:
            key = self.item_key(item)
            if key in self.done and key not in listed:
                listed.add(key)
                out.append(self.done[key])
        return out

    def _take(
        self,
        batch: list[Any],
        pending: Sequence[I],
        land: Callable[[Any], R] | None,
        lost: Callable[[I, str], R] | None,
        on_done: Callable[[R], None],
    ) -> None:
        """A batch of results from the executor: each logged once under its key (one fsync for the batch), then
        reported. A result is reported only once it is on disk; when one result of a batch cannot be taken (its
        files do not land, its item was lost and nothing records that), the ones before it are still kept."""
        fresh: list[R] = []
        try:
            for got in batch:
                if isinstance(got, Lost):
                    item = pending[got.index]
                    if lost is None:
                        raise ExecutorError(f"{self.item_key(item)}: {got.reason}; resume the run to redo it")
                    result = lost(item, got.reason)
                else:
                    result = land(got) if land is not None else cast(R, got)
                key = self.result_key(result)
                if key in self.done:  # a rerun the executor could not rule out: the first result stands
                    continue
                self.done[key] = result
                fresh.append(result)
        finally:
            self.log.extend(fresh)
            for result in fresh:
                on_done(result)
