"""Fixtures for sandbox tests: the docker backend (real engine) and started sandboxes on the base image."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend, DockerSandbox


@pytest.fixture
def sandbox(docker_backend: DockerBackend) -> Iterator[DockerSandbox]:
    with docker_backend.create(SandboxSpec(image=BASE_IMAGE, name_hint="test")) as sb:
        yield sb
