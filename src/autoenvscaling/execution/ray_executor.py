"""Trials on a Ray cluster: one Ray task per item (or per few items), a custom resource per node as its
concurrency cap, retries.

Each task asks for one unit of ``ExecutorConfig.resource`` (``sandbox_slot``); a node started with
``ray start --resources='{"sandbox_slot": 8}'`` runs at most 8 trials at once, and a node that declares none runs
none. A task whose worker or node dies is rerun elsewhere (``max_retries``); when its retries run out, its items
come back as ``Lost`` and the other items go on. An exception the work raises is not retried (it is the item's
result, or a bug). Results come back to this process, the only writer of the run.

A long run packs consecutive items into one Ray task (``items_per_task``; auto: up to 8 once every slot has 64
items or more ahead of it): Ray's submission and result costs are paid per task, and they were most of the
driver's cost per trial. A slot then runs its task's items in turn, so the run's tail is at most one task's items
per slot (a 32nd of each slot's share), and a task lost with its node reruns all its items.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from autoenvscaling.errors import UserInputError
from autoenvscaling.execution.base import ExecutorConfig, ExecutorError, Lost, each
from autoenvscaling.execution.portable import sweep_scratch

__all__ = ["ExecutorError", "RayExecutor"]

I = TypeVar("I")  # noqa: E741 - an item
R = TypeVar("R")


def _import_ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise UserInputError(
            "--executor ray needs Ray: pip install 'autoenvscaling[ray]' (or pip install ray)"
        ) from None


def _call(fn: Callable[[Any], Any], items: list[Any]) -> tuple[list[Any], Exception | None]:
    """What a Ray worker runs: the work on each item in turn (a module-level function, so Ray ships it by
    reference). An item's exception ends the task: the results before it come back with it."""
    out: list[Any] = []
    for item in items:
        try:
            out.append(fn(item))
        except Exception as e:  # the item's own result (or a bug): raised by the driver after its batch
            return out, e
    return out, None


def items_per_task(configured: int | None, n_items: int, slots: float) -> int:
    """``configured``, or 1 until each slot has 64 items ahead of it, then one per 32 items a slot has, at most 8."""
    if configured is not None:
        return configured
    return max(1, min(8, int(n_items // (32 * max(slots, 1.0)))))


class RayExecutor:
    name = "ray"
    remote = True

    def __init__(self, config: ExecutorConfig) -> None:
        self.config = config
        self.ray = _import_ray()
        self._started_here = False
        if not self.ray.is_initialized():
            self._connect()
        slots = float(self.ray.cluster_resources().get(config.resource, 0.0))
        if slots <= 0:
            self.close()
            raise UserInputError(
                f"no node of the Ray cluster declares the {config.resource!r} resource: start each node with "
                f"`ray start ... --resources='{{\"{config.resource}\": N}}'` (N: trials it may run at once)"
            )
        self.slots = slots
        self._remote = self.ray.remote(_call)

    def _connect(self) -> None:
        if self.config.address is None:  # a one-machine Ray: one slot per CPU
            import os

            cpus = os.cpu_count() or 1
            self.ray.init(resources={self.config.resource: cpus}, include_dashboard=False, log_to_driver=False)
        else:
            try:
                self.ray.init(address=self.config.address, log_to_driver=False)
            except ConnectionError as e:
                raise UserInputError(f"--ray-address {self.config.address}: {e}") from None
        self._started_here = True

    def map_batches(self, fn: Callable[[I], R], items: Sequence[I], concurrency: int) -> Iterator[list[R | Lost]]:
        ray = self.ray
        if not items:
            return
        task = self._remote.options(  # SPREAD: trials go across nodes, not piled onto the driver's
            num_cpus=0,
            resources={self.config.resource: 1},
            max_retries=self.config.max_retries,
            scheduling_strategy="SPREAD",
        )
        fn_ref = ray.put(fn)  # shipped once, not once per task
        window = self.config.in_flight or max(2, int(2 * self.slots))
        size = items_per_task(self.config.items_per_task, len(items), self.slots)
        starts = iter(range(0, len(items), size))
        index: dict[Any, range] = {}  # task ref -> its items' positions
        pending: list[Any] = []
        ready: list[Any] = []

        def submit(start: int) -> None:
            stop = min(start + size, len(items))
            ref = task.remote(fn_ref, [items[i] for i in range(start, stop)])  # consecutive: one archive shipped
            index[ref] = range(start, stop)
            pending.append(ref)

        for start in starts:
            submit(start)
            if len(pending) >= window:
                break
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                if len(pending) > 0:  # every other finished one too, without waiting
                    more, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
                    ready += more
                for _ in range(len(ready)):  # the window refills before the driver lands the batch
                    nxt = next(starts, None)
                    if nxt is None:
                        break
                    submit(nxt)
                taken, ready = ready, []
                batch, failure = self._get_all(taken, [index.pop(ref) for ref in taken])
                if batch:
                    yield batch
                if failure is not None:
                    raise failure
        finally:  # the caller stopped (an error, Ctrl-C): what is still queued or running is not wanted
            for ref in pending + ready:
                ray.cancel(ref)

    def map_unordered(self, fn: Callable[[I], R], items: Sequence[I], concurrency: int) -> Iterator[R | Lost]:
        """``map_batches``, one result at a time."""
        return each(self.map_batches(fn, items, concurrency))

    def _get_all(self, refs: list[Any], positions: list[range]) -> tuple[list[Any], BaseException | None]:
        """The finished tasks' results with one ``ray.get`` (each task by itself when that fails): every item's
        result, and the first exception an item raised, to raise after them."""
        try:
            got = list(self.ray.get(refs))
        except Exception:  # a task lost or failed: sorted out task by task
            got = [self._get(ref, where) for ref, where in zip(refs, positions, strict=True)]
        out: list[Any] = []
        failure: BaseException | None = None
        for results, error in got:
            out += results
            failure = failure or error
        return out, failure

    def _get(self, ref: Any, where: range) -> tuple[list[Any], BaseException | None]:
        ray = self.ray
        try:
            results, error = ray.get(ref)
            return results, error
        except ray.exceptions.RayTaskError as e:  # the task itself failed (its result would not pickle, ...)
            cause = e.cause
            return [], cause if isinstance(cause, BaseException) else e
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError, ray.exceptions.ObjectLostError) as e:
            tries = self.config.max_retries + 1
            why = f"its Ray worker or node died {tries} time(s) ({type(e).__name__}); retries ran out"
            return [Lost(i, why) for i in where], None

    def close(self) -> None:
        if self._started_here:
            self.ray.shutdown()
            self._started_here = False
        sweep_scratch()  # a worker on this node killed after the last task started left its scratch dir
