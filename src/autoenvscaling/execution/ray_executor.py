"""Trials on a Ray cluster: one Ray task per item, a custom resource per node as its concurrency cap, retries.

Each task asks for one unit of ``ExecutorConfig.resource`` (``sandbox_slot``); a node started with
``ray start --resources='{"sandbox_slot": 8}'`` runs at most 8 trials at once, and a node that declares none runs
none. A task whose worker or node dies is rerun elsewhere (``max_retries``); when its retries run out, the item
comes back as ``Lost`` and the other items go on. An exception the work raises is not retried (it is the item's
result, or a bug). Results come back to this process, the only writer of the run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from autoenvscaling.errors import UserInputError
from autoenvscaling.execution.base import ExecutorConfig, ExecutorError, Lost, each

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


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    """What a Ray worker runs: the work on one item (a module-level function, so Ray ships it by reference)."""
    return fn(item)


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
        todo = iter(enumerate(items))
        index: dict[Any, int] = {}  # task ref -> the item's position
        pending: list[Any] = []
        ready: list[Any] = []

        def submit(i: int, item: Any) -> None:
            ref = task.remote(fn_ref, item)
            index[ref] = i
            pending.append(ref)

        for i, item in todo:
            submit(i, item)
            if len(pending) >= window:
                break
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                if len(pending) > 0:  # every other finished one too, without waiting
                    more, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
                    ready += more
                for _ in range(len(ready)):  # the window refills before the driver lands the batch
                    nxt = next(todo, None)
                    if nxt is None:
                        break
                    submit(*nxt)
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

    def _get_all(self, refs: list[Any], indices: list[int]) -> tuple[list[Any], BaseException | None]:
        """The finished tasks' results with one ``ray.get``; when one failed, each on its own: the others' results,
        and the first failure to raise after them."""
        try:
            return list(self.ray.get(refs)), None
        except Exception:  # sorted out task by task below
            pass
        out: list[Any] = []
        failure: BaseException | None = None
        for ref, i in zip(refs, indices, strict=True):
            try:
                out.append(self._get(ref, i))
            except Exception as e:  # the item's own exception, raised after its batch
                failure = failure or e
        return out, failure

    def _get(self, ref: Any, index: int) -> Any:
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as e:
            cause = e.cause
            if isinstance(cause, BaseException):
                raise cause from None
            raise
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError, ray.exceptions.ObjectLostError) as e:
            tries = self.config.max_retries + 1
            return Lost(index, f"its Ray worker or node died {tries} time(s) ({type(e).__name__}); retries ran out")

    def close(self) -> None:
        if self._started_here:
            self.ray.shutdown()
            self._started_here = False
