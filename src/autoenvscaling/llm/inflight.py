"""Model requests under way, per endpoint: what an embedded server must wait for before it stops.

``xllamacpp``'s server stops its inference loop first and then joins its HTTP threads, so a request still under
way when the last reference goes never gets its answer, and the join waits for it forever (a second Ctrl-C
during a flywheel's solve stage left the process hung). ``OpenAIModel`` counts each request here, and
``EmbeddedServer.stop`` waits until its address has none.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

_busy: Counter[str] = Counter()
_changed = threading.Condition()


@contextmanager
def request(endpoint: str | None) -> Iterator[None]:
    """Count one request to ``endpoint`` (a base URL) while the block runs."""
    if not endpoint:
        yield
        return
    with _changed:
        _busy[endpoint] += 1
    try:
        yield
    finally:
        with _changed:
            _busy[endpoint] -= 1
            if _busy[endpoint] <= 0:
                del _busy[endpoint]
            _changed.notify_all()


def under_way(endpoint: str) -> int:
    with _changed:
        return _busy[endpoint]


def wait_idle(endpoint: str, timeout_sec: float) -> bool:
    """Wait until no request to ``endpoint`` is under way; False when some still are after ``timeout_sec``."""
    deadline = time.monotonic() + timeout_sec
    with _changed:
        while _busy[endpoint] > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _changed.wait(left)
        return True
