"""Image builds through the engine: labels, failures with their log, the wall-clock timeout."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import LABEL, BuildError, BuildSpec, SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend

pytestmark = pytest.mark.docker


@pytest.fixture
def tag(docker_backend: DockerBackend) -> Iterator[str]:
    name = f"autoenv-test/build:{os.getpid()}"
    yield name
    if docker_backend.image_exists(name):
        docker_backend.client.images.remove(name, force=True)


def context(tmp_path: Path, *lines: str) -> Path:
    (tmp_path / "Dockerfile").write_text("\n".join([f"FROM {BASE_IMAGE}", *lines]) + "\n")
    (tmp_path / "data.txt").write_text("data\n")
    return tmp_path


def test_build_labels_and_runs(docker_backend: DockerBackend, tag: str, tmp_path: Path) -> None:
    ctx = context(tmp_path, "COPY data.txt /data.txt", "WORKDIR /app")
    spec = BuildSpec(context_dir=ctx, tag=tag, labels={"purpose": "test"})
    assert docker_backend.build(spec) == tag
    labels = docker_backend.client.images.get(tag).labels
    assert labels[LABEL] == "1" and labels["purpose"] == "test"
    with docker_backend.create(SandboxSpec(image=tag)) as sb:
        assert sb.exec("pwd; cat /data.txt").stdout == "/app\ndata\n"


def test_build_failure_carries_the_log_tail(docker_backend: DockerBackend, tag: str, tmp_path: Path) -> None:
    ctx = context(tmp_path, "RUN echo about-to-fail && exit 7")
    with pytest.raises(BuildError) as info:
        docker_backend.build(BuildSpec(context_dir=ctx, tag=tag))
    assert not info.value.timed_out
    assert "about-to-fail" in info.value.log_tail and "7" in str(info.value)


def test_a_dockerfile_the_engine_cannot_parse_is_the_tasks_build_failure(
    docker_backend: DockerBackend, tag: str, tmp_path: Path
) -> None:
    # the engine refuses it before any step runs (HTTP 400), which is no engine failure (a yield benchmark's
    # one-shot arm wrote its Dockerfile on one line; the benchmark stopped on it as on an infrastructure error)
    (tmp_path / "Dockerfile").write_text(f"FROM {BASE_IMAGE} WORKDIR /app COPY data/ /app/data/\n")
    with pytest.raises(BuildError, match="FROM requires either one or three arguments"):
        docker_backend.build(BuildSpec(context_dir=tmp_path, tag=tag))
    (tmp_path / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nFROBNICATE /app\n")
    with pytest.raises(BuildError, match=r"(?i)unknown instruction"):
        docker_backend.build(BuildSpec(context_dir=tmp_path, tag=tag))


def test_build_timeout(docker_backend: DockerBackend, tag: str, tmp_path: Path) -> None:
    ctx = context(tmp_path, "RUN sleep 60")
    with pytest.raises(BuildError) as info:
        docker_backend.build(BuildSpec(context_dir=ctx, tag=tag, timeout_sec=2, no_cache=True))
    assert info.value.timed_out and "timed out" in str(info.value)


def test_missing_dockerfile(docker_backend: DockerBackend, tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="no Dockerfile"):
        docker_backend.build(BuildSpec(context_dir=tmp_path, tag="autoenv-test/none:1"))
