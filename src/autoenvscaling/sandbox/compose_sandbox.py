"""A sandbox with services: the task's own container (``main``) and its docker-compose services, one network each.

Driven through the docker SDK (no compose binary): ``start()`` creates a bridge network of the sandbox's own
(internal, so nothing reaches outside, unless the spec allows a network), starts each service in dependency order
as a hardened container (the capabilities, limits and labels of the sandbox's own container, and no mounts)
reachable by its service name, waits for what ``main`` depends on (and, as ``compose up --wait`` does, for every
service to run, healthy where it has a healthcheck), then starts ``main`` on that network, reachable as ``main``.

``stop()`` removes every container it made and then the network, whatever point ``start()`` reached, so a failed
or timed-out trial leaves nothing behind; ``autoenv sandbox gc`` removes what a crashed process left (same labels).
A service that fails to start, exits, or is not healthy in time is a ``ServiceStartError`` (an infrastructure
error of the trial, never a reward).
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import docker
import docker.errors
import docker.types

from autoenvscaling.sandbox.base import LABEL, LABEL_RUN, SandboxError, SandboxSpec, ServiceSpec, ServiceStartError
from autoenvscaling.sandbox.docker_sandbox import KEPT_CAPABILITIES, DockerSandbox
from autoenvscaling.sandbox.engine import engine_errors
from autoenvscaling.sandbox.janitor import owner_labels

LABEL_SERVICE = "autoenvscaling.service"
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
        self._released = False
        self._guard = threading.Lock()

    @property
    def network_name(self) -> str:
        return self._network

    @property
    def service_containers(self) -> dict[str, str]:
        return dict(self._service_ids)

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> None:
        if self._stopped:
            raise SandboxError(f"sandbox {self._name} was stopped; create a new one")
        if self._container_id is not None:
            return
        try:
            with engine_errors(f"starting the services of sandbox {self._name}"):
                self._create_network()
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
        except BaseException:
            with contextlib.suppress(SandboxError):
                self.stop()
            raise

    def stop(self) -> None:
        """Remove ``main``, then every service, then the network. Idempotent; a failed removal is retried next time."""
        try:
            super().stop()
        finally:
            self._release()

    def _release(self) -> None:
        with self._guard:
            self._released = True
            ids, self._service_ids = list(self._service_ids.values()), {}
            network, self._network_id = self._network_id, None
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

    def _endpoint(self, alias: str) -> dict[str, Any]:
        return {self._network: self._api.create_endpoint_config(aliases=[alias])}

    def _create_kwargs(self) -> dict[str, Any]:
        """``main`` joins the sandbox's network (never the default bridge, nor none: it must reach the services)."""
        kwargs = super()._create_kwargs()
        kwargs.pop("network_mode", None)
        kwargs["network"] = self._network
        kwargs["networking_config"] = self._endpoint(MAIN_ALIAS)
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
