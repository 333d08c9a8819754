"""Requests under way per endpoint, and an embedded server's stop that never destroys a server a request still
uses (its destructor would wait for that request forever); no model here, a stand-in server object."""

from __future__ import annotations

import threading
import time
from typing import ClassVar

from autoenvscaling.llm import embedded_server, inflight
from autoenvscaling.llm.embedded_server import EmbeddedServer

URL = "http://127.0.0.1:9/v1"


class _Native:
    """Stands in for ``xllamacpp.Server``: records when it is destroyed."""

    destroyed: ClassVar[list[str]] = []

    def __init__(self, name: str) -> None:
        self.name = name

    def __del__(self) -> None:
        _Native.destroyed.append(self.name)


def _running(name: str) -> EmbeddedServer:
    server = EmbeddedServer("0.5b")
    server._server, server._address = _Native(name), URL.removesuffix("/v1")
    server.stop_wait_sec = 0.2
    return server


def test_requests_are_counted_per_endpoint_and_waited_for() -> None:
    assert inflight.wait_idle(URL, 0.0)
    with inflight.request(URL), inflight.request(URL), inflight.request(None):
        assert inflight.under_way(URL) == 2 and inflight.under_way("other") == 0
        assert not inflight.wait_idle(URL, 0.05)
    assert inflight.under_way(URL) == 0 and inflight.wait_idle(URL, 0.0)
    release = threading.Event()

    def ask() -> None:
        with inflight.request(URL):
            release.wait(5)

    t = threading.Thread(target=ask)
    t.start()
    while not inflight.under_way(URL):
        time.sleep(0.001)
    threading.Timer(0.1, release.set).start()
    assert inflight.wait_idle(URL, 5)  # woken when the request ends, not at the timeout
    t.join()


def test_a_server_with_no_request_under_way_is_destroyed_at_once() -> None:
    _Native.destroyed.clear()
    _running("idle").stop()
    assert _Native.destroyed == ["idle"] and embedded_server.abandoned() == 0


def test_a_server_a_request_still_uses_is_kept_until_that_request_ends() -> None:
    _Native.destroyed.clear()
    server = _running("busy")
    with inflight.request(URL):
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 2 and not server.running
        assert _Native.destroyed == [] and embedded_server.abandoned() == 1
    assert embedded_server.abandoned() == 0 and _Native.destroyed == ["busy"]
