"""A cap on what a sandbox writes, where the engine cannot enforce one (overlay2 without project quotas).

``StorageWatch`` polls a measure of the sandbox's writable layer (Docker's ``SizeRw``: the bytes of every file
the container created or changed) on a thread for as long as the sandbox lives, and calls ``on_exceed`` once when
it passes the limit; the sandbox then removes its container (which frees the space at once) and fails the command
with ``StorageLimitError``. The sandbox also calls ``check`` when a command returns: it measures only when the
headroom left at the last measure could have been filled since (at ``ASSUMED_WRITE_MB_S``), so a burst written by a
short command near the limit is caught before the next step of the trial, at no cost far from it.

Cost: one measure walks the writable layer in the engine (about 2 ms for a fresh container, 40 ms for 10,000 files,
440 ms for 100,000 on the development machine). The poll interval adapts: it is the time the remaining headroom
would take to fill at ``ASSUMED_WRITE_MB_S`` (bounded to 0.25-2 s), and never less than 10 times what the last
measure cost, so the watcher spends at most about a tenth of the engine's time on a layer of many files. What a
task writes between two polls can pass the cap: at most about the disk's write speed times the interval.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

MB = 1024 * 1024
ASSUMED_WRITE_MB_S = 1024.0  # faster than the disks we measured (dd: ~700 MB/s); sets the interval near the cap
MIN_INTERVAL_SEC = 0.25
MAX_INTERVAL_SEC = 2.0
COST_FACTOR = 10.0  # wait at least this many times what the last measure took


def next_interval(used: int, limit: int, cost_sec: float) -> float:
    """Seconds until the next measure: sooner as the layer nears its limit, rarer when measuring is costly."""
    headroom_sec = max(limit - used, 0) / (ASSUMED_WRITE_MB_S * MB)
    return max(min(max(headroom_sec, MIN_INTERVAL_SEC), MAX_INTERVAL_SEC), COST_FACTOR * cost_sec)


class StorageWatch:
    """Calls ``on_exceed(used_bytes)`` once when ``measure()`` passes ``limit_bytes``.

    ``measure`` returns the bytes written, or None once the container is gone (the watch ends); an exception from
    it (the engine did not answer) is never taken for an overflow: the watch tries again at the longest interval.
    """

    def __init__(
        self, measure: Callable[[], int | None], limit_bytes: int, on_exceed: Callable[[int], None], name: str
    ) -> None:
        self.measure = measure
        self.limit = limit_bytes
        self.on_exceed = on_exceed
        self.exceeded: int | None = None  # the bytes measured when the limit was passed
        self.measures = 0
        self._lock = threading.Lock()  # one measure at a time (poll thread or a command that just returned)
        self._last = 0.0  # monotonic time of the last measure
        self._safe_until = 0.0  # until then the layer cannot have passed the limit (at the assumed write rate)
        self._interval = MIN_INTERVAL_SEC
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"storage {name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ends the polling (does not wait for a measure under way)."""
        self._stop.set()

    def check(self) -> int | None:
        """Measure now if the layer could have passed the limit since the last measure; returns ``exceeded``."""
        if self.exceeded is None and not self._stop.is_set() and time.monotonic() >= self._safe_until:
            self._measure()
        return self.exceeded

    def _measure(self) -> None:
        with self._lock:
            if self.exceeded is not None or self._stop.is_set():
                return
            t0 = time.monotonic()
            try:
                used = self.measure()
            except Exception:  # the engine's problem, not the task's: never an overflow; try again later
                used = -1
            self._last = time.monotonic()
            self.measures += 1
            if used is None:  # nothing left to watch
                self._stop.set()
                return
            if used < 0:
                self._interval = MAX_INTERVAL_SEC
                return
            self._interval = next_interval(used, self.limit, self._last - t0)
            self._safe_until = t0 + max(self.limit - used, 0) / (ASSUMED_WRITE_MB_S * MB)
            if used <= self.limit:
                return
            self.exceeded = used
        self.on_exceed(used)

    def _loop(self) -> None:
        while self.exceeded is None:
            delay = self._last + self._interval - time.monotonic()
            if delay > 0:  # (re)computed after each wait: a command's check may have measured meanwhile
                if self._stop.wait(delay):
                    return
                continue
            if self._stop.is_set():
                return
            self._measure()
