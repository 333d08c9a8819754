"""Docker-only behaviour: limits, labels, the socket ban, and the persistent shell under stress."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import LABEL, LABEL_OWNER_PID, LABEL_RUN, Mount, SandboxError, SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend, DockerSandbox
from autoenvscaling.sandbox.docker_sandbox import check_mounts

pytestmark = pytest.mark.docker


def inspect(backend: DockerBackend, sb: DockerSandbox) -> dict[str, Any]:
    assert sb.container_id is not None
    attrs: dict[str, Any] = backend.client.api.inspect_container(sb.container_id)
    return attrs


def test_limits_labels_and_init(docker_backend: DockerBackend) -> None:
    spec = SandboxSpec(image=BASE_IMAGE, cpus=1.5, memory_mb=256, pids_limit=100, network=False, run_id="run-x")
    with docker_backend.create(spec) as sb:
        attrs = inspect(docker_backend, sb)
        host = attrs["HostConfig"]
        assert (host["NanoCpus"], host["Memory"], host["PidsLimit"]) == (1_500_000_000, 256 * 2**20, 100)
        assert host["Init"] is True and host["NetworkMode"] == "none"
        labels = attrs["Config"]["Labels"]
        assert labels[LABEL] == "1" and labels[LABEL_RUN] == "run-x" and labels[LABEL_OWNER_PID] == str(os.getpid())
        assert not any("docker.sock" in m["Source"] for m in attrs["Mounts"])


@pytest.mark.parametrize(
    ("host", "container"),
    [
        ("/var/run/docker.sock", "/sock"),
        ("/run/docker.sock", "/x"),
        ("/run", "/r"),
        ("/", "/host"),
        (None, "/var/run/docker.sock"),
    ],
)
def test_docker_socket_never_mounted(tmp_path: Path, host: str | None, container: str) -> None:
    spec = SandboxSpec(
        image=BASE_IMAGE, mounts=[Mount(host_path=Path(host) if host else tmp_path, container_path=container)]
    )
    with pytest.raises(SandboxError, match="Docker socket"):
        check_mounts(spec)


def test_exit_keeps_the_persistent_shell(sandbox: DockerSandbox) -> None:
    shell_pid = sandbox.exec("echo $PPID").stdout
    assert sandbox.exec("exit 3").exit_code == 3
    assert sandbox.exec("set -e; false; echo no").exit_code == 1
    assert sandbox.exec("echo $PPID").stdout == shell_pid  # the same shell answered


def test_shell_killed_by_the_command_is_replaced(sandbox: DockerSandbox) -> None:
    r = sandbox.exec("echo before; kill -9 $PPID")
    assert r.exit_code == 137 and r.stdout == "before\n" and "killed" in r.stderr
    assert sandbox.exec("echo after").stdout == "after\n"


def test_binary_safe_input_and_output(sandbox: DockerSandbox) -> None:
    r = sandbox.exec("head -c 300000 /dev/urandom; printf '\\x00\\x01\\xff' >&2")
    assert r.exit_code == 0 and r.stderr == "\x00\x01\ufffd"
    script = "cat <<'EOF'\nquotes ' \" \\ $HOME `x` é \x01\nEOF"
    assert sandbox.exec(script).stdout == "quotes ' \" \\ $HOME `x` é \x01\n"
    big = "x" * 300_000  # beyond the 128 KiB limit of one argv string
    assert sandbox.exec(f"cat <<'EOF' | wc -c\n{big}\nEOF").stdout.strip() == "300001"


def test_large_output_is_capped_and_drained(sandbox: DockerSandbox) -> None:
    r = sandbox.exec("head -c 5000000 /dev/zero | tr '\\0' x; echo done >&2", output_limit=100_000)
    assert r.truncated and r.exit_code == 0 and r.stderr == "done\n"
    assert 100_000 <= len(r.stdout) < 100_200 and "4900000 bytes of output omitted" in r.stdout
    assert sandbox.exec("echo next").stdout == "next\n"


def test_timeout_kills_the_whole_process_group(sandbox: DockerSandbox) -> None:
    r = sandbox.exec("(sleep 2; echo late > /tmp/late) & sleep 30", timeout=0.5)
    assert r.timed_out
    r = sandbox.exec("sleep 3; test -e /tmp/late", timeout=10)
    assert r.exit_code == 1, "the background child should have died with its group"


@pytest.mark.parametrize("redirect", [">/dev/null 2>&1", ""])
def test_background_jobs_outlive_their_command(sandbox: DockerSandbox, redirect: str) -> None:
    # the job waits for a file the next command creates: returning must not wait for the job
    job = "(while [ ! -e /tmp/go ]; do sleep 0.05; done; echo bg > /tmp/bg)"
    r = sandbox.exec(f"{job} {redirect} & echo started", timeout=20)
    assert r.stdout == "started\n" and not r.timed_out
    r = sandbox.exec("touch /tmp/go; for i in $(seq 100); do [ -e /tmp/bg ] && break; sleep 0.05; done; cat /tmp/bg")
    assert r.stdout == "bg\n"


def test_other_user(sandbox: DockerSandbox) -> None:
    assert sandbox.exec("id -u", user="nobody").stdout == "65534\n"
    assert sandbox.exec("id -u", user="root").stdout == "0\n"
    assert sandbox.exec("id -u").stdout == "0\n"


def test_upload_text_mode_and_dir_into_existing(sandbox: DockerSandbox, tmp_path: Path) -> None:
    sandbox.upload_text("#!/bin/sh\necho run\n", "/opt/bin/run.sh", mode=0o755)
    assert sandbox.exec("stat -c %a /opt/bin/run.sh && /opt/bin/run.sh").stdout == "755\nrun\n"
    assert sandbox.exec("stat -c %a /tmp").stdout == "1777\n"
    (tmp_path / "f.txt").write_text("f")
    sandbox.upload(tmp_path, "/tmp")  # contents go into an existing dir, which keeps its mode
    assert sandbox.exec("cat /tmp/f.txt; stat -c %a /tmp").stdout == "f1777\n"


def test_stop_during_a_running_exec_does_not_hang(docker_backend: DockerBackend) -> None:
    sb = docker_backend.create(SandboxSpec(image=BASE_IMAGE, name_hint="stop-test"))
    sb.start()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            sb.exec("sleep 60")
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    threading.Event().wait(0.5)  # let the exec thread block in the shell
    sb.stop()
    t.join(30)
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], SandboxError)
    assert not docker_backend.client.containers.list(all=True, filters={"name": sb.id})


def test_missing_image(docker_backend: DockerBackend) -> None:
    with pytest.raises(SandboxError, match="not found"):
        docker_backend.create(SandboxSpec(image="autoenv/does-not-exist:1")).start()


def test_failed_start_leaves_no_container(docker_backend: DockerBackend, tmp_path: Path) -> None:
    # a bind mount onto /proc/x cannot be set up: the container is created, then fails to start
    marker = tmp_path / "file.txt"
    marker.write_text("x")
    spec = SandboxSpec(
        image=BASE_IMAGE, name_hint="bad-start", mounts=[Mount(host_path=marker, container_path="/proc/x")]
    )
    sb = docker_backend.create(spec)
    with pytest.raises(SandboxError, match="starting sandbox"):
        sb.start()
    assert not docker_backend.client.containers.list(all=True, filters={"name": sb.id})
