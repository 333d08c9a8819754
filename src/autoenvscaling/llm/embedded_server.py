"""Serve a GGUF in-process with llama.cpp's HTTP server (``xllamacpp``), OpenAI-compatible on 127.0.0.1.

The server runs on native threads inside this process; Python talks to it over HTTP like any other
endpoint, so the same ``OpenAIModel`` serves local and remote models. Dropping the last reference to
the ``xllamacpp.Server`` object stops it (its C++ destructor joins the server threads).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from autoenvscaling.llm import inflight
from autoenvscaling.llm.base import ModelError
from autoenvscaling.llm.embedded import model_path as installed_model_path
from autoenvscaling.llm.embedded_specs import DEFAULT_SIZE

DEFAULT_CTX_PER_SLOT = 16384  # an agent episode: system prompt + ~30 turns of commands and output


# Servers stopped while requests to them were under way, kept alive so that no destructor waits for those
# requests forever (``EmbeddedServer.stop``): ``reap_abandoned`` destroys the ones whose requests have ended.
_abandoned: list[tuple[Any, str]] = []


def abandoned() -> int:
    """How many stopped servers still have requests under way (the process can only end with ``os._exit``)."""
    reap_abandoned()
    return len(_abandoned)


def reap_abandoned() -> None:
    """Destroy the abandoned servers that no request uses any more."""
    keep = [(server, endpoint) for server, endpoint in _abandoned if inflight.under_way(endpoint)]
    _abandoned[:] = keep


class EmbeddedServer:
    """Context manager that runs the embedded model; ``base_url`` is ``http://127.0.0.1:PORT/v1``.

    ``parallel`` slots serve that many requests at once (continuous batching); each slot gets
    ``ctx_per_slot`` tokens of context. ``model_path`` serves any local GGUF instead of an installed size.
    """

    def __init__(
        self,
        size: str = DEFAULT_SIZE,
        *,
        model_path: Path | None = None,
        port: int = 0,
        parallel: int = 1,
        ctx_per_slot: int = DEFAULT_CTX_PER_SLOT,
        n_threads: int | None = None,
        startup_timeout_sec: float = 300.0,
        verbose: bool = False,
    ) -> None:
        if parallel < 1 or ctx_per_slot < 256:
            raise ModelError(f"need parallel >= 1, ctx_per_slot >= 256; got {parallel}, {ctx_per_slot}")
        self.size = size
        self._model_path = model_path
        self._port = port
        self.parallel = parallel
        self.ctx_per_slot = ctx_per_slot
        self.n_threads = n_threads or _cpu_count()
        self._startup_timeout = startup_timeout_sec
        self._verbose = verbose
        self._server: Any = None
        self._address = ""
        self.stop_wait_sec = 10.0

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def base_url(self) -> str:
        if not self.running:
            raise ModelError("embedded server is not running")
        return f"{self._address}/v1"

    @property
    def model_name(self) -> str:
        return _model_name(self.model_path)

    @property
    def model_path(self) -> Path:
        if self._model_path is not None:
            return self._model_path
        return installed_model_path(self.size)

    def start(self) -> EmbeddedServer:
        if self.running:
            return self
        path = self.model_path  # raises ModelNotInstalledError first: the most actionable error
        if not path.is_file():
            raise ModelError(f"embedded server: no GGUF file at {path}")
        if self._port:
            _ensure_port_free(self._port)
        xlc = _import_xllamacpp()
        params = xlc.CommonParams()
        params.model.path = str(path)
        params.model_alias = {_model_name(path)}
        params.hostnames = ["127.0.0.1"]
        params.port = self._port
        params.n_parallel = self.parallel
        params.n_ctx = self.ctx_per_slot * self.parallel
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_threads
        if not self._verbose:
            params.verbosity = 0  # llama.cpp logs every request otherwise; errors still print
        try:
            server = xlc.Server(params)
        except Exception as e:  # xllamacpp raises plain RuntimeError/ValueError for load failures
            raise ModelError(f"embedded server failed to start with {path.name}: {e}") from None
        self._server = server
        self._address = str(server.listening_address).rstrip("/")
        try:
            _wait_healthy(self._address, self._startup_timeout)
        except ModelError:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop serving. The C++ destructor stops the inference loop, then joins the HTTP threads, so it runs only
        once no request to this server is under way (``inflight``; they normally are not: a run's executor waits
        for its items); a server whose requests still run after ``stop_wait_sec`` is left running (``abandoned``)."""
        server, endpoint = self._server, f"{self._address}/v1"
        self._server, self._address = None, ""
        if server is None:
            return
        try:
            idle = inflight.wait_idle(endpoint, self.stop_wait_sec)
        except BaseException:  # Ctrl-C while waiting: destroying it now would hang the process
            _abandoned.append((server, endpoint))
            raise
        if not idle:
            _abandoned.append((server, endpoint))
        del server

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _model_name(path: Path) -> str:
    return path.stem


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _import_xllamacpp() -> Any:
    try:
        import xllamacpp
    except ImportError:
        raise ModelError("the embedded model needs xllamacpp: pip install 'autoenvscaling[embedded]'") from None
    return xllamacpp


def _ensure_port_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As servers do: a port in TIME_WAIT after a restart is free, one with a listener is not.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as e:
            reason = "already in use" if e.errno == errno.EADDRINUSE else e.strerror
            raise ModelError(f"embedded server: port {port} on 127.0.0.1 is {reason}") from None


def _wait_healthy(address: str, timeout_sec: float) -> None:
    deadline = time.monotonic() + timeout_sec
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{address}/health", timeout=5) as resp:
                body = json.loads(resp.read() or b"{}")
                if resp.status == 200 and body.get("status", "ok") == "ok":
                    return
                last = f"status {body.get('status')!r}"
        except (urllib.error.URLError, OSError, json.JSONDecodeError) as e:
            last = str(e)  # 503 while the model loads
        time.sleep(0.1)
    raise ModelError(f"embedded server at {address} not healthy after {timeout_sec:.0f}s: {last}")


_shared_lock = threading.Lock()
_shared: dict[tuple[object, ...], tuple[EmbeddedServer, int]] = {}


@contextlib.contextmanager
def shared_server(
    size: str = DEFAULT_SIZE,
    *,
    model_path: Path | None = None,
    parallel: int = 1,
    ctx_per_slot: int = DEFAULT_CTX_PER_SLOT,
) -> Iterator[EmbeddedServer]:
    """One server per model and shape for the whole process: the first user starts it, the last stops it.

    Loading the weights twice would double the RAM and halve the speed of both copies on a small CPU.
    """
    key = (size, model_path, parallel, ctx_per_slot)
    with _shared_lock:  # held while starting, so a second user waits for the first start
        server, users = _shared.get(key, (None, 0))
        if server is None:
            server = EmbeddedServer(size, model_path=model_path, parallel=parallel, ctx_per_slot=ctx_per_slot)
            server.start()
        _shared[key] = (server, users + 1)
    try:
        yield server
    finally:
        with _shared_lock:
            server, users = _shared[key]
            if users <= 1:
                del _shared[key]
                server.stop()
            else:
                _shared[key] = (server, users - 1)
