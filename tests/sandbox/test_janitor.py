"""The janitor: which containers count as orphaned, and gc of a killed run."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import EngineUnavailableError, SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.janitor import LABEL_OWNER_HOST, collect, owner_alive, owner_labels


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_owner_alive() -> None:
    assert owner_alive(owner_labels())
    assert not owner_alive({**owner_labels(), "autoenvscaling.pid": str(dead_pid())})
    assert not owner_alive({**owner_labels(), "autoenvscaling.pidstart": "1"})  # pid reused by another process
    assert not owner_alive({})
    assert owner_alive({**owner_labels(), "autoenvscaling.pid": str(dead_pid()), LABEL_OWNER_HOST: "elsewhere"})
    assert owner_labels()[LABEL_OWNER_HOST] == socket.gethostname()


def test_unreachable_engine_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(EngineUnavailableError, match="docker info"):
        DockerBackend().image_exists(BASE_IMAGE)


_ORPHAN = """
import os, signal
from autoenvscaling.sandbox.base import SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend
sb = DockerBackend().create(SandboxSpec(image={image!r}, name_hint="orphan", run_id={run!r}))
sb.start()
print(sb.id, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.docker
def test_gc_removes_a_killed_runs_containers(docker_backend: DockerBackend) -> None:
    run = f"gc-test-{os.getpid()}"
    proc = subprocess.run(
        [sys.executable, "-c", _ORPHAN.format(image=BASE_IMAGE, run=run)], capture_output=True, text=True
    )
    orphan = proc.stdout.strip()
    assert proc.returncode == -9 and orphan, proc.stderr
    client = docker_backend.client
    with docker_backend.create(SandboxSpec(image=BASE_IMAGE, name_hint="live", run_id=run)) as live:
        report = collect(client, run)
        assert report.containers == [orphan] and report.skipped_live == [live.id]
        assert not client.containers.list(all=True, filters={"name": orphan})
        assert client.containers.list(filters={"name": live.id})


@pytest.mark.docker
def test_gc_cli(docker_backend: DockerBackend) -> None:
    from autoenvscaling.cli.app import app

    run = f"gc-cli-{os.getpid()}"
    with docker_backend.create(SandboxSpec(image=BASE_IMAGE, name_hint="cli", run_id=run)) as sb:
        kept = CliRunner().invoke(app, ["sandbox", "gc", "--run", run])
        assert kept.exit_code == 0 and "kept 1 container" in kept.output
        gone = CliRunner().invoke(app, ["sandbox", "gc", "--run", run, "--all"])
        assert gone.exit_code == 0 and f"removed container {sb.id}" in gone.output


class _VanishingApi:
    """An engine whose listed containers are all removed by their own run before gc reaches them."""

    def __init__(self) -> None:
        self.removed: list[str] = []

    def containers(self, all: bool = False, filters: dict[str, object] | None = None) -> list[dict[str, object]]:
        dead = {**owner_labels(), "autoenvscaling.pid": str(dead_pid())}
        return [
            {"Id": "abc123", "Names": ["/gone"], "Labels": dead},
            {"Id": "def456", "Names": ["/here"], "Labels": dead},
        ]

    def remove_container(self, container: str, force: bool = False, v: bool = False) -> None:
        import docker.errors

        if container == "abc123":
            raise docker.errors.NotFound("No such container: abc123")
        self.removed.append(container)


class _VanishingClient:
    def __init__(self) -> None:
        self.api = _VanishingApi()
        empty = type("Empty", (), {"list": staticmethod(lambda **_: [])})
        self.networks = self.volumes = empty()
        self.images = type("Images", (), {"prune": staticmethod(lambda **_: {})})()


def test_gc_skips_a_container_removed_while_it_runs() -> None:
    """A live run removes its own containers while gc lists them: gc neither fails nor counts them."""
    client = _VanishingClient()
    report = collect(client)  # type: ignore[arg-type]
    assert report.containers == ["here"] and client.api.removed == ["def456"]
