"""Multi-container sandboxes on the real engine: services by name on a network of their own, started in dependency
order, hardened like the sandbox, failures typed, and nothing left behind (stop, a failed start, the janitor)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import docker
import pytest

from autoenvscaling.sandbox.base import (
    LABEL,
    LABEL_OWNER_PID,
    LABEL_RUN,
    SandboxSpec,
    ServiceHealthcheck,
    ServiceSpec,
    ServiceStartError,
)
from autoenvscaling.sandbox.compose_sandbox import ComposeSandbox
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.janitor import collect

pytestmark = pytest.mark.docker

IMAGE = "autoenv/terminal:latest"  # python3 and curl
SERVER = ["python3", "-m", "http.server", "8000", "--directory", "/etc"]
HEALTHY = ServiceHealthcheck(test=["CMD", "curl", "-sf", "http://127.0.0.1:8000/hostname"], interval_sec=0.2)


@pytest.fixture(scope="module")
def backend() -> DockerBackend:
    backend = DockerBackend()
    if not backend.image_exists(IMAGE):
        pytest.fail(f"{IMAGE} is missing: run `autoenv images bootstrap`")
    return backend


@pytest.fixture
def run_id() -> Iterator[str]:
    run = f"compose-test-{uuid.uuid4().hex[:8]}"
    yield run
    assert _left(run) == ([], []), "the test left containers or networks behind"


def _left(run: str) -> tuple[list[str], list[str]]:
    client = docker.from_env()
    label = {"label": f"{LABEL_RUN}={run}"}
    containers = [c.name or "" for c in client.containers.list(all=True, filters=label)]
    return containers, [n.name or "" for n in client.networks.list(filters=label)]


def _spec(run: str, services: list[ServiceSpec], **kw: Any) -> SandboxSpec:
    return SandboxSpec(image=IMAGE, name_hint="compose", run_id=run, services=services, **kw)


def test_services_by_name_on_an_internal_network(backend: DockerBackend, run_id: str) -> None:
    web = ServiceSpec(name="web", image=IMAGE, command=SERVER, healthcheck=HEALTHY, env={"MODE": "x"})
    once = ServiceSpec(name="init", image=IMAGE, command=["sh", "-c", "exit 0"])
    spec = _spec(
        run_id,
        [once, web],
        network=False,
        depends_on={"web": "service_healthy", "init": "service_completed_successfully"},
    )
    sandbox = backend.create(spec)
    assert isinstance(sandbox, ComposeSandbox)
    with sandbox:
        res = sandbox.exec("curl -sf http://web:8000/hostname >/dev/null && getent hosts main >/dev/null && echo ok")
        assert res.stdout.strip() == "ok", res.output
        outside = sandbox.exec("curl -s -m 3 -o /dev/null http://1.1.1.1/ ; echo $?")
        assert outside.stdout.strip() != "0"  # internal: no route out
        client = backend.client
        network = client.networks.get(sandbox.network_name)
        assert network.attrs["Internal"] is True
        assert network.attrs["Labels"][LABEL_RUN] == run_id and LABEL_OWNER_PID in network.attrs["Labels"]
        containers, _ = _left(run_id)
        assert len(containers) == 3  # main, web, init (exited 0)
        info = client.api.inspect_container(sandbox.service_containers["web"])
        host = info["HostConfig"]
        assert host["CapDrop"] == ["ALL"] and not host["Privileged"] and host["SecurityOpt"] == ["no-new-privileges"]
        assert host["PidsLimit"] == spec.pids_limit and not info["Mounts"] and host["Init"] is True
        assert info["Config"]["Labels"][LABEL] == "1" and "MODE=x" in info["Config"]["Env"]
    assert _left(run_id) == ([], [])


def test_an_internal_network_does_not_reach_the_host(backend: DockerBackend, run_id: str) -> None:
    """A host service listening on all interfaces is out of reach: the bridge has no host address to reach."""
    with socket.create_server(("0.0.0.0", 0)) as listener:
        port = listener.getsockname()[1]
        web = ServiceSpec(name="web", image=IMAGE, command=SERVER, healthcheck=HEALTHY)
        spec = _spec(run_id, [web], network=False, depends_on={"web": "service_healthy"})
        with backend.create(spec) as sandbox:
            assert isinstance(sandbox, ComposeSandbox)
            network = backend.client.networks.get(sandbox.network_name)
            gateway = network.attrs["IPAM"]["Config"][0]["Gateway"]
            assert network.attrs["Options"].get("com.docker.network.bridge.inhibit_ipv4") == "true"
            probe = f"timeout 3 bash -c 'exec 3<>/dev/tcp/{gateway}/{port}' 2>/dev/null && echo reached || echo blocked"
            assert sandbox.exec(probe).stdout.strip() == "blocked"
            assert sandbox.exec("curl -sf -m 3 http://web:8000/hostname >/dev/null && echo ok").stdout.strip() == "ok"


def test_a_public_network_reaches_out_of_the_trial(backend: DockerBackend, run_id: str) -> None:
    with backend.create(_spec(run_id, [ServiceSpec(name="web", image=IMAGE, command=SERVER)], network=True)) as sb:
        assert isinstance(sb, ComposeSandbox)
        assert backend.client.networks.get(sb.network_name).attrs["Internal"] is False


def test_an_unhealthy_service_is_a_typed_error_and_nothing_stays(backend: DockerBackend, run_id: str) -> None:
    sick = ServiceSpec(
        name="db",
        image=IMAGE,
        command=["sleep", "600"],
        healthcheck=ServiceHealthcheck(test=["CMD", "false"], interval_sec=0.2, retries=2),
    )
    sandbox = backend.create(_spec(run_id, [sick], depends_on={"db": "service_healthy"}))
    with pytest.raises(ServiceStartError, match=r"service 'db' of sandbox .* became unhealthy"):
        sandbox.start()
    assert _left(run_id) == ([], [])


@pytest.mark.parametrize(
    ("service", "depends_on", "message"),
    [
        (["sh", "-c", "echo broken >&2; exit 3"], "service_completed_successfully", r"exited with status 3.*broken"),
        (["sleep", "600"], "service_healthy", "waits for service 'svc' to be healthy, but it has no healthcheck"),
        (["sh", "-c", "sleep 0.5; exit 1"], "service_healthy", "exited with status 1 before it was healthy"),
    ],
    ids=["failed one-shot", "no healthcheck", "exits before healthy"],
)
def test_failed_dependencies(
    backend: DockerBackend, run_id: str, service: list[str], depends_on: str, message: str
) -> None:
    slow = ServiceHealthcheck(test=["CMD", "false"], interval_sec=30) if "before it was" in message else None
    svc = ServiceSpec(name="svc", image=IMAGE, command=service, healthcheck=slow)
    sandbox = backend.create(_spec(run_id, [svc], depends_on={"svc": depends_on}))
    with pytest.raises(ServiceStartError, match=message):
        sandbox.start()
    assert _left(run_id) == ([], [])


def test_a_slow_health_times_out(backend: DockerBackend, run_id: str) -> None:
    slow = ServiceHealthcheck(test=["CMD", "false"], interval_sec=5, retries=10, start_period_sec=60)
    spec = _spec(
        run_id,
        [ServiceSpec(name="db", image=IMAGE, command=["sleep", "600"], healthcheck=slow)],
        services_timeout_sec=1.0,
    )
    with pytest.raises(ServiceStartError, match="did not become healthy within 1 s"):
        backend.create(spec).start()


def test_a_missing_service_image_is_a_typed_error(backend: DockerBackend, run_id: str) -> None:
    spec = _spec(run_id, [ServiceSpec(name="db", image="autoenv/no-such-image:never")])
    with pytest.raises(ServiceStartError, match="image autoenv/no-such-image:never not found"):
        backend.create(spec).start()


def test_stop_while_running_and_twice(backend: DockerBackend, run_id: str) -> None:
    sandbox = backend.create(_spec(run_id, [ServiceSpec(name="web", image=IMAGE, command=SERVER)]))
    sandbox.start()
    assert len(_left(run_id)[0]) == 2
    sandbox.stop()
    sandbox.stop()
    assert _left(run_id) == ([], [])


_ORPHAN = """
import os, signal
from autoenvscaling.sandbox.base import SandboxSpec, ServiceSpec
from autoenvscaling.sandbox.docker import DockerBackend
svc = ServiceSpec(name="web", image={image!r}, command=["sleep", "600"])
sb = DockerBackend().create(SandboxSpec(image={image!r}, name_hint="orphan", run_id={run!r}, services=[svc]))
sb.start()
print(sb.network_name, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_gc_removes_a_killed_runs_services_and_network(backend: DockerBackend, run_id: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _ORPHAN.format(image=IMAGE, run=run_id)], capture_output=True, text=True
    )
    network = proc.stdout.strip()
    assert proc.returncode == -signal.SIGKILL and network, proc.stderr
    assert len(_left(run_id)[0]) == 2
    report = collect(backend.client, run_id)
    assert len(report.containers) == 2 and report.networks == [network]
