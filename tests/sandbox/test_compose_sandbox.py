"""Multi-container sandboxes on the real engine: services by name on a network of their own, started in dependency
order, hardened like the sandbox, volumes of their own and capped tmpfs mounts, failures typed, and nothing left
behind (stop, a failed start, the janitor)."""

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
    StorageLimitError,
    TmpfsMount,
    VolumeMount,
)
from autoenvscaling.sandbox.compose_sandbox import LABEL_VOLUME, ComposeSandbox
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.janitor import collect
from docker_helpers import containers_of

pytestmark = pytest.mark.docker

IMAGE = "autoenv/terminal:latest"  # python3 and curl
SERVER = ["python3", "-m", "http.server", "8000", "--directory", "/etc"]
HEALTHY = ServiceHealthcheck(test=["CMD", "curl", "-sf", "http://127.0.0.1:8000/hostname"], interval_sec=0.2)


@pytest.fixture
def run_id() -> Iterator[str]:
    run = f"compose-test-{uuid.uuid4().hex[:8]}"
    yield run
    assert _left(run) == ([], [], []), "the test left containers, networks or volumes behind"


def _left(run: str) -> tuple[list[str], list[str], list[str]]:
    client = docker.from_env()
    label = {"label": f"{LABEL_RUN}={run}"}
    containers = containers_of(run)
    volumes = [v.name or "" for v in client.volumes.list(filters=label)]
    return containers, [n.name or "" for n in client.networks.list(filters=label)], volumes


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
        containers, _, _ = _left(run_id)
        assert len(containers) == 3  # main, web, init (exited 0)
        info = client.api.inspect_container(sandbox.service_containers["web"])
        host = info["HostConfig"]
        assert host["CapDrop"] == ["ALL"] and not host["Privileged"] and host["SecurityOpt"] == ["no-new-privileges"]
        assert host["PidsLimit"] == spec.pids_limit and not info["Mounts"] and host["Init"] is True
        assert info["Config"]["Labels"][LABEL] == "1" and "MODE=x" in info["Config"]["Env"]
    assert _left(run_id) == ([], [], [])


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
    assert _left(run_id) == ([], [], [])


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
    assert _left(run_id) == ([], [], [])


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


SHARED = VolumeMount(volume="shared", target="/shared", read_only=True)


def test_a_named_volume_is_shared_and_tmpfs_mounts_are_capped(backend: DockerBackend, run_id: str) -> None:
    """A one-shot writer fills the trial's volume; main mounts it read-only. A tmpfs never outgrows the memory cap."""
    writer = ServiceSpec(
        name="writer",
        image=IMAGE,
        command=["sh", "-c", "echo written > /work/msg && cp /work/msg /out/msg"],
        volumes=[VolumeMount(volume="shared", target="/out")],
        tmpfs=[TmpfsMount(target="/work", size_bytes=1 << 20, mode=0o700)],
    )
    spec = _spec(
        run_id,
        [writer],
        depends_on={"writer": "service_completed_successfully"},
        memory_mb=256,
        volumes=["shared"],
        volume_mounts=[SHARED],
        tmpfs=[TmpfsMount(target="/scratch", size_bytes=1 << 40)],  # 1 TiB asked: capped at the 256 MB memory limit
    )
    sandbox = backend.create(spec)
    assert isinstance(sandbox, ComposeSandbox)
    with sandbox:
        assert sandbox.exec("cat /shared/msg").stdout == "written\n"
        assert sandbox.exec("touch /shared/forged").exit_code != 0  # read-only here
        mounts = sandbox.exec("grep -E ' /(scratch|shared) ' /proc/mounts").stdout
        assert "tmpfs /scratch tmpfs " in mounts and "size=262144k" in mounts
        client = backend.client
        (name,) = sandbox.volume_names.values()
        assert name.startswith(sandbox.id)  # unique to the trial
        labels = client.volumes.get(name).attrs["Labels"]
        assert labels[LABEL_RUN] == run_id and LABEL_OWNER_PID in labels and labels[LABEL_VOLUME] == "shared"
        info = client.api.inspect_container(sandbox.service_containers["writer"])
        assert info["HostConfig"]["Tmpfs"] == {"/work": "size=1048576,mode=700"}
        assert [(m["Type"], m["Name"], m["Destination"]) for m in info["Mounts"]] == [("volume", name, "/out")]
        assert _left(run_id)[2] == [name]
    assert _left(run_id) == ([], [], [])


def test_main_alone_with_a_tmpfs_or_a_volume(backend: DockerBackend, run_id: str) -> None:
    """A compose file may give main a tmpfs (a one-container sandbox) or a volume (a sandbox that makes volumes)."""
    spec = SandboxSpec(
        image=IMAGE, name_hint="alone", run_id=run_id, memory_mb=64, tmpfs=[TmpfsMount(target="/t", mode=0o700)]
    )
    with backend.create(spec) as sandbox:
        assert not isinstance(sandbox, ComposeSandbox)
        line = sandbox.exec("grep ' /t ' /proc/mounts").stdout
        assert "size=65536k" in line and "mode=700" in line  # no size asked: the memory limit
    spec = SandboxSpec(
        image=IMAGE,
        name_hint="alone",
        run_id=run_id,
        volumes=["v"],
        volume_mounts=[VolumeMount(volume="v", target="/v")],
    )
    with backend.create(spec) as sandbox:
        assert isinstance(sandbox, ComposeSandbox)
        assert sandbox.exec("echo x > /v/f && cat /v/f").stdout == "x\n"
        assert len(_left(run_id)[2]) == 1
    assert _left(run_id) == ([], [], [])


def test_a_failed_start_removes_the_volumes(backend: DockerBackend, run_id: str) -> None:
    broken = ServiceSpec(
        name="writer", image=IMAGE, command=["sh", "-c", "exit 3"], volumes=[VolumeMount(volume="v", target="/v")]
    )
    spec = _spec(run_id, [broken], depends_on={"writer": "service_completed_successfully"}, volumes=["v"])
    with pytest.raises(ServiceStartError, match="exited with status 3"):
        backend.create(spec).start()
    assert _left(run_id) == ([], [], [])


def test_main_writing_a_volume_past_the_storage_limit_is_stopped(backend: DockerBackend, run_id: str) -> None:
    """A volume lies outside every writable layer: what it holds counts against storage_mb all the same."""
    idle = ServiceSpec(
        name="idle", image=IMAGE, command=["sleep", "600"], volumes=[VolumeMount(volume="v", target="/v")]
    )
    spec = _spec(run_id, [idle], storage_mb=20, volumes=["v"], volume_mounts=[VolumeMount(volume="v", target="/data")])
    sandbox = backend.create(spec)
    sandbox.start()
    with pytest.raises(StorageLimitError, match=r"its volumes hold .* over its storage limit of 20 MB"):
        sandbox.exec("head -c 40000000 /dev/zero > /data/fill; sleep 5")
    sandbox.stop()  # as the trial does: it returns once the watch's own stop is done
    assert _left(run_id) == ([], [], [])


def test_a_service_filling_a_volume_while_it_starts_is_stopped(backend: DockerBackend, run_id: str) -> None:
    filler = ServiceSpec(
        name="filler",
        image=IMAGE,
        command=["sh", "-c", "head -c 40000000 /dev/zero > /v/fill; sleep 5"],
        volumes=[VolumeMount(volume="v", target="/v")],
    )
    spec = _spec(
        run_id, [filler], storage_mb=20, volumes=["v"], depends_on={"filler": "service_completed_successfully"}
    )
    with pytest.raises(StorageLimitError, match="over its storage limit of 20 MB"):
        backend.create(spec).start()
    assert _left(run_id) == ([], [], [])


def test_stop_while_running_and_twice(backend: DockerBackend, run_id: str) -> None:
    sandbox = backend.create(_spec(run_id, [ServiceSpec(name="web", image=IMAGE, command=SERVER)]))
    sandbox.start()
    assert len(_left(run_id)[0]) == 2
    sandbox.stop()
    sandbox.stop()
    assert _left(run_id) == ([], [], [])


_ORPHAN = """
import os, signal
from autoenvscaling.sandbox.base import SandboxSpec, ServiceSpec
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.base import VolumeMount
svc = ServiceSpec(name="web", image={image!r}, command=["sleep", "600"], volumes=[VolumeMount(volume="v", target="/v")])
spec = SandboxSpec(image={image!r}, name_hint="orphan", run_id={run!r}, services=[svc], volumes=["v"])
sb = DockerBackend().create(spec)
sb.start()
print(sb.network_name, sb.volume_names["v"], flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_gc_removes_a_killed_runs_services_network_and_volumes(backend: DockerBackend, run_id: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _ORPHAN.format(image=IMAGE, run=run_id)], capture_output=True, text=True
    )
    network, _, volume = proc.stdout.strip().partition(" ")
    assert proc.returncode == -signal.SIGKILL and network and volume, proc.stderr
    assert len(_left(run_id)[0]) == 2 and _left(run_id)[2] == [volume]
    report = collect(backend.client, run_id)
    assert len(report.containers) == 2 and report.networks == [network] and report.volumes == [volume]
