"""A sandbox with services: the task's own container (``main``) and its docker-compose services, one network each.

Driven through the docker SDK (no compose binary): ``start()`` creates a bridge network of the sandbox's own
(internal, so nothing reaches outside, unless the spec allows a network) and the sandbox's volumes (fresh ones,
named after the sandbox, labelled like its containers), starts each service in dependency order as a hardened
container (the capabilities, limits and labels of the sandbox's own container; no host path is ever mounted, only
the sandbox's volumes and tmpfs mounts) reachable by its service name, waits for what ``main`` depends on (and, as
``compose up --wait`` does, for every service to run, healthy where it has a healthcheck), then starts ``main`` on
that network, reachable as ``main``. What the volumes hold counts against ``storage_mb`` together with main's
writable layer, watched from the start (sandbox/volumes.py).

``stop()`` removes every container it made, then the network, then the volumes, whatever point ``start()``
reached, so a failed or timed-out trial leaves nothing behind; ``autoenv sandbox gc`` removes what a crashed
process left (same labels). A service that fails to start, exits, or is not healthy in time is a
``ServiceStartError`` (an infrastructure error of the trial, never a reward).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Any

import docker
import docker.errors
import docker.types

from autoenvscaling.sandbox.base import (
    LABEL,
    LABEL_RUN,
    SandboxError,
    SandboxSpec,
    ServiceSpec,
    ServiceStartError,
    StorageLimitError,
)
from autoenvscaling.sandbox.docker_sandbox import KEPT_CAPABILITIES, DockerSandbox
from autoenvscaling.sandbox.engine import engine_errors
from autoenvscaling.sandbox.janitor import owner_labels
from autoenvscaling.sandbox.storage import MB, StorageWatch
from autoenvscaling.sandbox.volumes import tmpfs_options, tree_bytes, volume_mounts

LABEL_SERVICE = "autoenvscaling.service"
LABEL_VOLUME = "autoenvscaling.volume"  # the volume's name in the task's compose file
MAIN_ALIAS = "main"
INHIBIT_HOST_ADDRESS = "com.docker.network.bridge.inhibit_ipv4"  # the bridge gets no host IPv4 address
_POLL_SEC = 0.25
_STARTED, _HEALTHY, _COMPLETED = "service_started", "service_healthy", "service_completed_successfully"
_READY = "ready"  # compose up --wait: running (healthy, with a healthcheck) or exited 0


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


class ComposeSandbox(DockerSandbox):
    """``main`` is this sandbox's own container (every command runs there); the services only run next to it."""

    def __init__(self, client: docker.DockerClient, spec: SandboxSpec, *, quota: bool = False) -> None:
        super().__init__(client, spec, quota=quota)
        self._network = f"{self._name}-net"
        self._network_id: str | None = None
        self._service_ids: dict[str, str] = {}  # service name -> container id
        self._volume_names = {v: f"{self._name}-{v}" for v in spec.volumes}  # the spec's name -> the engine's
        self._volumes: dict[str, str] = {}  # created volumes: the engine's name -> its directory on the host
        self._released = False
        self._guard = threading.Lock()
        # One stop at a time: a stop that finds another under way (the storage watch's) returns once it is done.
        self._stopping = threading.RLock()

    @property
    def network_name(self) -> str:
        return self._network

    @property
    def service_containers(self) -> dict[str, str]:
        return dict(self._service_ids)

    @property
    def volume_names(self) -> dict[str, str]:
        """The spec's volume names -> the engine's (unique to this sandbox)."""
        return dict(self._volume_names)

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> None:
        if self._stopped:
            raise SandboxError(f"sandbox {self._name} was stopped; create a new one")
        if self._container_id is not None:
            return
        try:
            with engine_errors(f"starting the services of sandbox {self._name}"):
                self._create_network()
                self._create_volumes()
                self._watch_volumes()
                for svc in self.spec.services:
                    for dep, condition in svc.depends_on.items():
                        self._wait(dep, condition, f"service {svc.name!r}")
                    self._start_service(svc)
                for dep, condition in self.spec.depends_on.items():
                    self._wait(dep, condition, "main")
                waited_for = {d for s in self.spec.services for d, c in s.depends_on.items() if c == _COMPLETED}
                waited_for |= {d for d, c in self.spec.depends_on.items() if c == _COMPLETED}
                for svc in self.spec.services:
                    self._wait(svc.name, _COMPLETED if svc.name in waited_for else _READY, "the environment")
            super().start()
        except BaseException as e:
            with contextlib.suppress(SandboxError):
                self.stop()
            if self._storage_error is not None and isinstance(e, Exception) and not isinstance(e, StorageLimitError):
                raise StorageLimitError(self._storage_error) from None  # the watch removed it while it started
            raise

    def stop(self) -> None:
        """Remove ``main``, every service, the network, the volumes. Idempotent; what fails is retried next time."""
        with self._stopping:
            try:
                super().stop()
            finally:
                self._release()

    def _release(self) -> None:
        with self._guard:
            self._released = True
            ids, self._service_ids = list(self._service_ids.values()), {}
            network, self._network_id = self._network_id, None
            volumes, self._volumes = dict(self._volumes), {}
        problems: list[str] = []
        for cid in ids:
            try:
                self._api.remove_container(cid, force=True, v=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as e:
                if "already in progress" not in str(e):
                    problems.append(str(e.explanation or e))
        if network is not None:
            try:
                self._api.remove_network(network)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as e:
                with self._guard:
                    self._network_id = network  # still attached (a container being created): the next stop retries
                problems.append(str(e.explanation or e))
        for name, path in volumes.items():
            try:
                self._api.remove_volume(name)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as e:
                with self._guard:
                    self._volumes[name] = path  # still in use (a container being created): the next stop retries
                problems.append(str(e.explanation or e))
        if problems:
            raise SandboxError(f"removing the services of sandbox {self._name}: {problems[0]}")

    # -- the network and the services -------------------------------------------------------------------------
    def _labels(self) -> dict[str, str]:
        labels = {LABEL: "1", **owner_labels()}
        if self.spec.run_id:
            labels[LABEL_RUN] = self.spec.run_id
        return labels

    def _create_network(self) -> None:
        internal = not self.spec.network
        # An internal bridge still gives the host an address on it, and with it every host service listening on
        # all interfaces; without that address the containers reach each other and nothing else.
        options = {INHIBIT_HOST_ADDRESS: "true"} if internal else None
        network = self._client.networks.create(
            self._network, driver="bridge", internal=internal, options=options, labels=self._labels()
        )
        with self._guard:
            if not self._released:
                self._network_id = network.id
                return
        with contextlib.suppress(docker.errors.APIError):
            network.remove()
        raise SandboxError(f"sandbox {self._name} was stopped while it started")

    def _create_volumes(self) -> None:
        labels = {**self.spec.labels, **self._labels()}
        for name, engine_name in self._volume_names.items():
            volume = self._client.volumes.create(engine_name, driver="local", labels={**labels, LABEL_VOLUME: name})
            with self._guard:
                tracked = not self._released
                if tracked:
                    self._volumes[engine_name] = str(volume.attrs.get("Mountpoint") or "")
            if not tracked:
                with contextlib.suppress(docker.errors.APIError):
                    volume.remove()
                raise SandboxError(f"sandbox {self._name} was stopped while it started")

    # -- storage: the volumes with main's writable layer -------------------------------------------------------
    def _watch_volumes(self) -> None:
        """From before the first service starts: what the volumes hold, with main's layer once it runs."""
        if not self._volumes or not self.spec.storage_mb:
            return
        for path in self._volumes.values():
            if not path or not os.access(path, os.R_OK | os.X_OK):
                raise SandboxError(
                    f"sandbox {self._name}: its volumes count against its storage limit, but this process cannot "
                    f"read the engine's volume dir {path!r} to measure them (run as root, or with a rootless engine)"
                )
        self._storage = StorageWatch(self._used_bytes, self.spec.storage_mb * MB, self._over_storage, self._name)
        self._storage.start()

    def _watch_storage(self) -> None:
        if self._storage is None:  # no volumes: main's writable layer alone, as for any sandbox
            super()._watch_storage()

    def _used_bytes(self) -> int | None:
        with self._guard:
            if self._released:
                return None
            paths = list(self._volumes.values())
        used = sum(tree_bytes(p) for p in paths)
        if self._container_id is not None:
            layer = self.writable_layer_bytes()
            if layer is None:
                return None
            used += layer
        return used

    def _over_storage(self, used: int) -> None:
        if not self._volume_names:
            return super()._over_storage(used)
        self._storage_error = (
            f"sandbox {self._name} and its volumes hold {used / MB:.0f} MB, over its storage limit of "
            f"{self.spec.storage_mb} MB ([environment].storage_mb); it was removed"
        )
        with contextlib.suppress(SandboxError):
            self.stop()

    def _endpoint(self, alias: str) -> dict[str, Any]:
        return {self._network: self._api.create_endpoint_config(aliases=[alias])}

    def _create_kwargs(self) -> dict[str, Any]:
        """``main`` joins the sandbox's network (never the default bridge, nor none: it must reach the services)."""
        kwargs = super()._create_kwargs()
        kwargs.pop("network_mode", None)
        kwargs["network"] = self._network
        kwargs["networking_config"] = self._endpoint(MAIN_ALIAS)
        kwargs["mounts"] = [*kwargs["mounts"], *volume_mounts(self.spec.volume_mounts, self._volume_names)]
        return kwargs

    def _service_kwargs(self, svc: ServiceSpec) -> dict[str, Any]:
        spec = self.spec
        kwargs: dict[str, Any] = {
            "image": svc.image,
            "name": f"{self._name}-{svc.name}",
            "detach": True,
            "init": True,
            "labels": {**spec.labels, **self._labels(), LABEL_SERVICE: svc.name},
            "environment": dict(svc.env),
            "pids_limit": spec.pids_limit,
            "cap_drop": ["ALL"],
            "cap_add": list(KEPT_CAPABILITIES),
            "security_opt": ["no-new-privileges"],
            "network": self._network,
            "networking_config": self._endpoint(svc.name),
        }
        optional = {"command": svc.command, "entrypoint": svc.entrypoint, "working_dir": svc.workdir, "user": svc.user}
        kwargs.update({k: v for k, v in optional.items() if v is not None})
        if spec.cpus:
            kwargs["nano_cpus"] = int(spec.cpus * 1e9)
        if spec.memory_mb:
            kwargs["mem_limit"] = f"{spec.memory_mb}m"
        if svc.volumes:
            kwargs["mounts"] = volume_mounts(svc.volumes, self._volume_names)
        if svc.tmpfs:
            kwargs["tmpfs"] = tmpfs_options(svc.tmpfs, spec.memory_mb)
        if spec.file_size_mb:
            size = spec.file_size_mb * 1024 * 1024
            kwargs["ulimits"] = [docker.types.Ulimit(name="fsize", soft=size, hard=size)]
        if (hc := svc.healthcheck) is not None:
            kwargs["healthcheck"] = {
                "test": hc.test,
                "interval": _ns(hc.interval_sec),
                "timeout": _ns(hc.timeout_sec),
                "retries": hc.retries,
                "start_period": _ns(hc.start_period_sec),
            }
        return kwargs

    def _start_service(self, svc: ServiceSpec) -> None:
        try:
            container = self._client.containers.create(**self._service_kwargs(svc))
        except docker.errors.ImageNotFound:
            raise ServiceStartError(f"service {svc.name!r}: image {svc.image} not found") from None
        with self._guard:
            tracked = not self._released
            if tracked:
                self._service_ids[svc.name] = str(container.id)
        if not tracked:
            with contextlib.suppress(docker.errors.APIError):
                container.remove(force=True)
            raise SandboxError(f"sandbox {self._name} was stopped while it started")
        try:
            container.start()
        except docker.errors.APIError as e:
            raise ServiceStartError(f"service {svc.name!r} could not start: {e.explanation or e}") from None

    # -- waiting -----------------------------------------------------------------------------------------------
    def _wait(self, name: str, condition: str, waiter: str) -> None:
        """Until service ``name`` meets ``condition`` (for ``waiter``), or a ``ServiceStartError``."""
        if condition == _STARTED:
            return  # started in order before anything that depends on it
        timeout = self.spec.services_timeout_sec
        deadline = time.monotonic() + timeout
        while True:
            with self._guard:
                cid = None if self._released else self._service_ids.get(name)
            if cid is None:
                raise SandboxError(f"sandbox {self._name} was stopped while it started")
            state = self._api.inspect_container(cid)["State"]
            health = state.get("Health") or {}
            exited = state.get("Status") in ("exited", "dead")
            code = int(state.get("ExitCode") or 0)
            if condition == _COMPLETED or (condition == _READY and exited and not health):
                if exited and code == 0:
                    return
                if exited:
                    raise self._failed(name, cid, f"exited with status {code}")
            elif condition == _READY and not health:
                return  # running, no healthcheck
            elif not health:
                raise ServiceStartError(f"{waiter} waits for service {name!r} to be healthy, but it has no healthcheck")
            elif health.get("Status") == "healthy":
                return
            elif exited:  # before "unhealthy": the engine marks an exited container so
                raise self._failed(name, cid, f"exited with status {code} before it was healthy")
            elif health.get("Status") == "unhealthy":
                raise self._failed(name, cid, "became unhealthy", health)
            if time.monotonic() > deadline:
                what = "complete" if condition == _COMPLETED else "become healthy"
                raise self._failed(name, cid, f"did not {what} within {timeout:g} s", health)
            time.sleep(_POLL_SEC)

    def _failed(self, name: str, cid: str, what: str, health: dict[str, Any] | None = None) -> ServiceStartError:
        checks = (health or {}).get("Log") or []
        last = str(checks[-1].get("Output") or "").strip()[-500:] if checks else ""
        try:
            logs = self._api.logs(cid, tail=20).decode(errors="replace").strip()[-1500:]
        except docker.errors.DockerException:
            logs = ""
        detail = "".join(
            [f"; last healthcheck output: {last}" if last else "", f"; its last output: {logs}" if logs else ""]
        )
        return ServiceStartError(f"service {name!r} of sandbox {self._name} {what}{detail}")
