"""A process-wide stop request, so that Ctrl-C (or SIGTERM turned into it) ends a run promptly.

Python delivers an interrupt to the main thread only. A run's trials, episodes and attempts work in an executor's
threads, and the executor waits for the running ones before it lets the interrupt through (their sandboxes must
be removed, their trial dirs closed). Without a signal to them, that wait lasted as long as their remaining model
turns: minutes on a CPU. The local executor sets this request when its caller is interrupted and clears it once
its threads are done; every model call checks it first and raises ``Interrupted`` (a ``BaseException``: the work
unwinds through its cleanup, is recorded as no result, and is never turned into an error verdict or a reward).
At most the model call and the command under way finish first.

Like ``errors.py``, any layer may import this module; it imports nothing of the project.
"""

from __future__ import annotations

import threading

_requested = threading.Event()


class Interrupted(BaseException):
    """The process was asked to stop while this thread worked; the work it was doing is not finished."""


def request_stop() -> None:
    _requested.set()


def clear_stop() -> None:
    _requested.clear()


def stop_requested() -> bool:
    return _requested.is_set()


def check_stop() -> None:
    """Raise ``Interrupted`` when a stop was requested."""
    if _requested.is_set():
        raise Interrupted("the run was interrupted")
