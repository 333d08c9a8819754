"""The trainers a round starts as child processes (a ``command`` trainer, a TRL job) die with the flywheel, so a
crashed or killed run leaves no trainer behind holding the GPU."""

from __future__ import annotations

import ctypes
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In the child (``preexec_fn``): get SIGTERM when the parent dies (Linux; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
