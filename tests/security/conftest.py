"""Fixtures of the security tests: a hostile-task writer and the docker backend (real engine)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile import MakeTask, write_task

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.docker import DockerBackend


@pytest.fixture
def make_task(tmp_path: Path) -> MakeTask:
    counter = iter(range(1000))

    def make(**kwargs: str) -> Path:
        return write_task(tmp_path / f"task{next(counter)}", **kwargs)

    return make


@pytest.fixture(scope="session")
def docker_backend() -> Iterator[DockerBackend]:
    backend = DockerBackend()
    if not backend.image_exists(BASE_IMAGE):
        pytest.fail(f"{BASE_IMAGE} is missing: run `autoenv images bootstrap`")
    yield backend
