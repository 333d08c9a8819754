"""The Docker backend: images built with the engine's layer cache, one container per sandbox.

One ``docker.DockerClient`` per backend, created on first use (no work at import). The sandboxes it creates
share it; its connection pool is safe for our pattern of use (one call at a time per sandbox).
"""

from __future__ import annotations

import contextlib
import functools
import re
import socket
import threading
import time
from collections import deque
from typing import Any

import docker
import docker.errors

from autoenvscaling.sandbox.base import LABEL, BuildError, BuildSpec, SandboxError, SandboxSpec
from autoenvscaling.sandbox.compose_sandbox import ComposeSandbox
from autoenvscaling.sandbox.docker_sandbox import DockerSandbox
from autoenvscaling.sandbox.engine import connect, engine_errors

__all__ = ["DockerBackend", "DockerSandbox", "connect"]

_LOG_TAIL_LINES = 40
# Errors on the build stream that come from the engine or the host, not from the Dockerfile: the build is an
# infrastructure failure (an error), never the task's (an invalid verdict).
_ENGINE_FAULTS = re.compile(
    r"no space left on device|input/output error|read-only file system|failed to register layer"
    r"|error creating overlay mount|failed to create shim|containerd|connection (refused|reset)|broken pipe"
    r"|cannot allocate memory|too many open files|context deadline exceeded|i/o timeout",
    re.IGNORECASE,
)

# The engine's 4xx answers to a build request that are about the Dockerfile itself (a yield benchmark's one-shot
# arm wrote its Dockerfile on one line, `FROM autoenv/terminal:latest WORKDIR /app COPY data/ /app/data/`: "dockerfile
# parse error line 1: FROM requires either one or three arguments"): the task's build failed, the engine is fine.
_DOCKERFILE_REFUSED = re.compile(r"dockerfile parse error|unknown instruction|dockerfile .*cannot be empty", re.I)


class _BuildRun:
    """Consumes one build's JSON stream on a worker thread, so the caller can enforce a wall-clock timeout."""

    def __init__(self, api: Any, spec: BuildSpec) -> None:
        self.api = api
        self.spec = spec
        self.log: deque[str] = deque(maxlen=_LOG_TAIL_LINES)
        self.error: str | None = None
        self.engine_error: str | None = None  # the engine or the connection failed, not the Dockerfile
        self.response: Any = None
        self.thread = threading.Thread(target=self._run, name=f"build {spec.tag}", daemon=True)

    def _run(self) -> None:
        try:
            stream = self.api.build(
                path=str(self.spec.context_dir),
                dockerfile=self.spec.dockerfile,
                tag=self.spec.tag,
                labels={LABEL: "1", **self.spec.labels},
                rm=True,
                forcerm=True,
                nocache=self.spec.no_cache,
                pull=False,
                buildargs=dict(self.spec.args) or None,
                decode=True,
            )
            # The HTTP response lives in the generator's frame; holding it lets a timeout close the
            # connection, which makes the engine cancel the build.
            self.response = getattr(stream, "gi_frame", None) and stream.gi_frame.f_locals.get("response")
            for item in stream:
                if "stream" in item:
                    self.log.extend(str(item["stream"]).rstrip("\n").splitlines())
                if "error" in item:
                    self.error = str(item["error"]).strip()
                    self.log.append(self.error)
                    if _ENGINE_FAULTS.search(self.error):
                        self.engine_error = self.error
        except docker.errors.APIError as e:
            if self.error is not None:
                return
            if e.is_client_error() and _DOCKERFILE_REFUSED.search(str(e.explanation or "")):
                self.error = str(e.explanation).strip()  # the task's Dockerfile, refused before any step ran
                self.log.append(self.error)
            else:
                self.engine_error = f"{type(e).__name__}: {e}"
        except Exception as e:  # a connection error is the engine's, not the task's
            if self.error is None:
                self.engine_error = f"{type(e).__name__}: {e}"

    def cancel(self) -> None:
        """Drop the build's connection, which makes the engine cancel the build.

        Shutting the socket down (rather than closing the response) wakes the worker blocked in a read
        without waiting for the lock it holds."""
        connection = getattr(getattr(self.response, "raw", None), "_connection", None)
        sock = getattr(connection, "sock", None)
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def storage_quota_supported(info: dict[str, Any]) -> bool:
    """overlay2 enforces ``size=`` only on xfs (mounted with project quotas); devicemapper/btrfs/zfs always can."""
    driver = str(info.get("Driver", ""))
    status = {str(k): str(v) for k, v in info.get("DriverStatus") or []}
    if driver in ("devicemapper", "btrfs", "zfs"):
        return True
    return driver == "overlay2" and status.get("Backing Filesystem") == "xfs"  # pquota is checked at create


class DockerBackend:
    name = "docker"

    def __init__(self, client: docker.DockerClient | None = None) -> None:
        self._client = client
        self._lock = threading.Lock()

    @property
    def client(self) -> docker.DockerClient:
        with self._lock:
            if self._client is None:
                self._client = connect()
            return self._client

    def build(self, spec: BuildSpec) -> str:
        if not (spec.context_dir / spec.dockerfile).is_file():
            raise BuildError(f"no {spec.dockerfile} in {spec.context_dir}")
        run = _BuildRun(self.client.api, spec)
        t0 = time.monotonic()
        run.thread.start()
        run.thread.join(spec.timeout_sec)
        tail = "\n".join(run.log)
        if run.thread.is_alive():
            run.cancel()
            raise BuildError(
                f"building {spec.tag} timed out after {spec.timeout_sec:.0f}s", log_tail=tail, timed_out=True
            )
        if run.engine_error is not None:
            raise SandboxError(f"building {spec.tag}: the Docker engine failed: {run.engine_error}")
        if run.error is not None:
            raise BuildError(f"building {spec.tag} failed: {run.error}", log_tail=tail)
        if not self.image_exists(spec.tag):
            raise BuildError(f"building {spec.tag} produced no image ({time.monotonic() - t0:.0f}s)", tail)
        return spec.tag

    def image_exists(self, ref: str) -> bool:
        with engine_errors(f"looking up image {ref}"):
            try:
                self.client.images.get(ref)
            except docker.errors.ImageNotFound:
                return False
        return True

    def create(self, spec: SandboxSpec) -> DockerSandbox:
        # Without quotas, the sandbox watches its writable layer instead (sandbox/storage.py).
        quota = bool(spec.storage_mb) and self.storage_quota
        if spec.services or spec.volumes:  # a compose task: its services and volumes next to it, a network of its own
            return ComposeSandbox(self.client, spec, quota=quota)
        return DockerSandbox(self.client, spec, quota=quota)

    def runs_own_processes(self, spec: SandboxSpec) -> bool:
        """Whether a container of ``spec`` runs anything before our commands besides ``sleep``: the image's
        ENTRYPOINT or HEALTHCHECK, or a compose task's services. True when the image cannot be read."""
        if spec.services:
            return True
        try:
            with engine_errors(f"inspecting image {spec.image}"):
                api: Any = self.client.api
                config = api.inspect_image(spec.image).get("Config") or {}
        except SandboxError:
            return True
        healthcheck = (config.get("Healthcheck") or {}).get("Test") or []
        return bool(config.get("Entrypoint")) or healthcheck not in ([], ["NONE"])

    @functools.cached_property
    def storage_quota(self) -> bool:
        """Whether the engine can cap a container's writable layer (``--storage-opt size=``)."""
        with engine_errors("reading the engine's storage driver"):
            return storage_quota_supported(self.client.info())

    def cleanup(self, run_id: str | None = None, *, include_live: bool = False) -> int:
        from autoenvscaling.sandbox.janitor import collect

        return collect(self.client, run_id, include_live=include_live).removed
