"""The backend a flywheel run hands to every stage: labels each sandbox with the run id, times the calls.

Stages are made of parts (solve runs, propose runs, validation runs) that each name containers after their own
run dir; relabelling here puts every container of a flywheel run under one ``autoenvscaling.run`` label, so
``docker ps --filter label=autoenvscaling.run=<id>`` and the janitor see the whole run. The time spent inside
backend and sandbox calls (build, create, start, exec, copies, stop) is summed per call, which is what the
scale benchmark compares against wall time to measure orchestration overhead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Self, TypeVar

from pydantic import BaseModel, Field

from autoenvscaling.flywheel.crash import checkpoint
from autoenvscaling.sandbox.base import (
    DEFAULT_OUTPUT_LIMIT,
    BuildSpec,
    ExecResult,
    NetworkControl,
    Sandbox,
    SandboxBackend,
    SandboxError,
    SandboxSpec,
    run_outside_channel,
)

T = TypeVar("T")


class CallStats(BaseModel):
    calls: dict[str, int] = Field(default_factory=dict)
    seconds: dict[str, float] = Field(default_factory=dict)  # summed over threads, per call kind
    busy_sec: float = 0.0  # wall time during which at least one call was in flight (the union of the calls)

    @property
    def total_sec(self) -> float:
        return sum(self.seconds.values())


class _Timer:
    """Sums call times per kind and the union of their intervals: calls overlap (a trial starts the next
    sandbox in the background; stages run items concurrently), so only the union compares to wall time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.stats = CallStats()
        self._active = 0
        self._busy_since = 0.0

    @contextmanager
    def time(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        with self._lock:
            if self._active == 0:
                self._busy_since = started
            self._active += 1
        try:
            yield
        finally:
            now = time.perf_counter()
            with self._lock:
                self._active -= 1
                if self._active == 0:
                    self.stats.busy_sec += now - self._busy_since
                self.stats.calls[name] = self.stats.calls.get(name, 0) + 1
                self.stats.seconds[name] = self.stats.seconds.get(name, 0.0) + now - started

    def snapshot(self) -> CallStats:
        with self._lock:
            stats = self.stats.model_copy(deep=True)
            if self._active:
                stats.busy_sec += time.perf_counter() - self._busy_since
            return stats


class RunSandbox:
    """A sandbox whose calls are timed; ``start`` passes the crash hook's ``sandbox`` point."""

    def __init__(self, inner: Sandbox, timer: _Timer) -> None:
        self._inner = inner
        self._timer = timer

    @property
    def id(self) -> str:
        return self._inner.id

    def _timed(self, name: str, fn: Callable[[], T]) -> T:
        with self._timer.time(name):
            return fn()

    def start(self) -> None:
        self._timed("start", self._inner.start)
        checkpoint("sandbox")

    def exec(
        self,
        cmd: str,
        *,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        user: str | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> ExecResult:
        return self._timed(
            "exec",
            lambda: self._inner.exec(cmd, timeout=timeout, env=env, cwd=cwd, user=user, output_limit=output_limit),
        )

    def upload(self, src: Path, dst: str) -> None:
        self._timed("upload", lambda: self._inner.upload(src, dst))

    def upload_text(self, content: str | bytes, dst: str, mode: int = 0o644) -> None:
        self._timed("upload", lambda: self._inner.upload_text(content, dst, mode))

    def download(self, src: str, dst: Path) -> None:
        self._timed("download", lambda: self._inner.download(src, dst))

    def stop(self) -> None:
        self._timed("stop", self._inner.stop)

    def reset_channel(self, script: str, timeout: float) -> int:
        return self._timed("exec", lambda: run_outside_channel(self._inner, script, timeout))

    def disconnect_network(self) -> None:
        if not isinstance(self._inner, NetworkControl):
            raise SandboxError(f"sandbox {self.id} cannot cut its network")
        self._timed("network", self._inner.disconnect_network)

    def __enter__(self) -> Self:
        self.start()  # as every backend's sandbox does: ``with backend.create(spec) as sb`` runs started
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class RunBackend:
    """Wraps ``inner``: every sandbox carries ``run_id``; ``cleanup`` always means this run's leftovers."""

    def __init__(self, inner: SandboxBackend, run_id: str) -> None:
        self.inner = inner
        self.run_id = run_id
        self.name = inner.name
        self._timer = _Timer()

    @property
    def stats(self) -> CallStats:
        return self._timer.snapshot()

    def build(self, spec: BuildSpec) -> str:
        with self._timer.time("build"):
            return self.inner.build(spec)

    def image_exists(self, ref: str) -> bool:
        with self._timer.time("image_exists"):
            return self.inner.image_exists(ref)

    def create(self, spec: SandboxSpec) -> RunSandbox:
        spec = spec.model_copy(update={"run_id": self.run_id})
        with self._timer.time("create"):
            return RunSandbox(self.inner.create(spec), self._timer)

    def cleanup(self, run_id: str | None = None, *, include_live: bool = False) -> int:
        """Remove this run's sandboxes whose creating process is gone (``run_id`` is ignored: always ours)."""
        with self._timer.time("cleanup"):
            return self.inner.cleanup(self.run_id, include_live=include_live)
