"""Container starts and removals off a trial's critical path.

Starting a container costs ~0.8 s of engine latency (namespaces, mounts, runc) but little CPU, so a run
that knows another trial of the same task follows asks for a spare in the background; the next trial takes it
instead of starting its own. A spare is a brand-new container that nothing has run in, so trials stay
isolated exactly as before. Spares nobody takes are stopped by ``close()``.

The same holds within a trial: a separate verifier's container is a fresh one of the pristine image, independent
of what the agent does, so it starts while the agent works (``PendingSandbox``; the artifacts are copied in only
after the agent phase).

And a finished trial's containers can be removed after its result is written (``Reaper``): the next trial starts
while the engine tears the last one down, and ``close()`` waits for every removal, so nothing outlives the run.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor

from autoenvscaling.sandbox.base import Sandbox, SandboxBackend, SandboxSpec

log = logging.getLogger(__name__)


class Prewarmer:
    def __init__(self, backend: SandboxBackend, workers: int = 2) -> None:
        self.backend = backend
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prewarm")
        self._spares: dict[str, list[Future[Sandbox]]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def _start(self, spec: SandboxSpec) -> Sandbox:
        sandbox = self.backend.create(spec)
        sandbox.start()
        return sandbox

    def prepare(self, key: str, spec: SandboxSpec) -> None:
        with self._lock:
            if self._closed:
                return
            self._spares.setdefault(key, []).append(self._pool.submit(self._start, spec))

    def take(self, key: str) -> Sandbox | None:
        """A started spare for ``key``, or None (none prepared, or it failed to start: start one normally)."""
        with self._lock:
            futures = self._spares.get(key)
            fut = futures.pop(0) if futures else None
        if fut is None:
            return None
        try:
            return fut.result()
        except Exception:
            return None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            futures = [f for fs in self._spares.values() for f in fs]
            self._spares.clear()
        for fut in futures:
            with contextlib.suppress(Exception):
                fut.result().stop()
        self._pool.shutdown(wait=True)


class PendingSandbox:
    """A sandbox starting in a worker thread: a separate verifier's, while the agent phase runs.

    ``take`` waits for it and hands it over once: to the verifier, or to the trial's teardown when the verifier never
    ran. None: it failed (what it made is gone), was not safe to start early, or was taken already; a verifier then
    starts one the usual way, so an early start never changes what a trial records. A wait interrupted by Ctrl-C
    leaves the removal to the worker, which stops the sandbox once it started."""

    def __init__(self, future: Future[Sandbox | None]) -> None:
        self._future = future
        self._taken = False

    def take(self) -> Sandbox | None:
        if self._taken:
            return None
        self._taken = True
        if self._future.cancel():
            return None
        waited = False
        try:
            futures.wait([self._future])
            waited = True
        finally:
            if not waited:
                self._future.add_done_callback(_stop_started)
        try:
            return self._future.result()
        except Exception:
            return None


def _stop_started(future: Future[Sandbox | None]) -> None:
    if future.cancelled() or future.exception() is not None:
        return
    sandbox = future.result()
    if sandbox is not None:
        try:
            sandbox.stop()
        except Exception as e:
            log.warning("could not remove sandbox %s (started early, never used): %s", sandbox.id, e)


class Reaper:
    """Removes finished trials' sandboxes in worker threads. ``close()`` waits for every removal; one that fails is
    logged, and its container (labelled like every sandbox) is left to ``autoenv sandbox gc``."""

    def __init__(self, workers: int = 2) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="reaper")
        self._pending: list[Future[None]] = []
        self._lock = threading.Lock()
        self._closed = False
        self.failures: list[str] = []

    def remove(self, sandboxes: list[Sandbox], early: PendingSandbox | None = None) -> None:
        """Hand these over for removal (and ``early``'s sandbox once it started, when the verifier never took it)."""
        with self._lock:
            if not self._closed:
                self._pending = [f for f in self._pending if not f.done()]  # a long run hands over thousands
                self._pending += [self._pool.submit(self._stop, sb) for sb in sandboxes]
                if early is not None:
                    self._pending.append(self._pool.submit(lambda: self._stop(early.take())))
                return
        for sb in sandboxes:  # after close(): here and now
            self._stop(sb)
        if early is not None:
            self._stop(early.take())

    def _stop(self, sandbox: Sandbox | None) -> None:
        if sandbox is None:
            return
        try:
            sandbox.stop()
        except Exception as e:
            log.warning(
                "could not remove sandbox %s after its trial: %s (`autoenv sandbox gc` removes it)", sandbox.id, e
            )
            with self._lock:
                self.failures.append(f"{sandbox.id}: {e}")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pending, self._pending = self._pending, []
        futures.wait(pending)
        self._pool.shutdown(wait=True)
