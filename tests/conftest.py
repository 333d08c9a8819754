"""Fixtures shared across test folders: a tiny task writer (tasks, cli), an open pool, a dir for task dirs
(pool, export, cli), and the real Docker engine (``docker_backend``, also as ``backend``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.pool import Pool
from autoenvscaling.sandbox.docker import DockerBackend
from task_factory import MakeTask, write_task

TERMINAL_IMAGE = "autoenv/terminal:latest"  # the image most Docker-backed tests run tasks on


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[Pool]:
    with Pool.open(tmp_path / "pool") as p:
        yield p


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    d = tmp_path / "tasks"
    d.mkdir()
    return d


@pytest.fixture
def make_task(tmp_path: Path) -> MakeTask:
    """``make_task(name="t", files={"rel/path": text or None})`` writes a task dir under tmp_path."""

    def make(name: str = "tiny", files: dict[str, str | None] | None = None) -> Path:
        return write_task(tmp_path / name, files)

    return make


@pytest.fixture(scope="session")
def docker_backend() -> Iterator[DockerBackend]:
    """The real engine, once per session; fails (never skips) when an image the tests start from is missing."""
    backend = DockerBackend()
    for image in (BASE_IMAGE, TERMINAL_IMAGE):
        if not backend.image_exists(image):
            pytest.fail(f"{image} is missing: run `autoenv images bootstrap`")
    try:
        yield backend
    finally:
        backend.client.close()


@pytest.fixture(scope="session")
def backend(docker_backend: DockerBackend) -> DockerBackend:
    """``docker_backend`` under the name the Docker-backed validate, verify and proposer tests use."""
    return docker_backend
