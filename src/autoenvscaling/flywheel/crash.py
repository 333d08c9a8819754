"""A test hook: ``AUTOENV_TEST_CRASH_AT=<point>[#n]`` makes the process SIGKILL itself at the n-th (default
first) time it passes ``point``, exactly as a machine failure would end it: no cleanup, no flushing.

Points are named ``r<round>.<stage>.<event>``. Events: ``start``; ``item`` (one item's record written);
``pool`` (a pool write committed, its record not yet written); ``attempt`` (one solver attempt finished);
``sandbox`` (a sandbox was just started, so a container is running); ``done`` (the stage's output written).
``fnmatch`` patterns work (``r2.*.item``). Nothing happens when the variable is unset.
"""

from __future__ import annotations

import os
import signal
import threading
from fnmatch import fnmatchcase

ENV = "AUTOENV_TEST_CRASH_AT"
_hits: dict[str, int] = {}
_lock = threading.Lock()
_stage = ""  # the stage running now, "r<round>.<stage>" (set by the round runner)


def set_stage(stage: str) -> None:
    global _stage
    _stage = stage


def current_stage() -> str:
    return _stage


def checkpoint(event: str) -> None:
    """Passing ``<current stage>.<event>``; a no-op unless the test hook names it."""
    target = os.environ.get(ENV)
    if not target:
        return
    point = f"{_stage}.{event}" if _stage else event
    pattern, _, nth = target.partition("#")
    if not fnmatchcase(point, pattern):
        return
    with _lock:
        _hits[pattern] = _hits.get(pattern, 0) + 1
        hit = _hits[pattern]
    if hit == (int(nth) if nth.isdigit() else 1):
        os.kill(os.getpid(), signal.SIGKILL)
