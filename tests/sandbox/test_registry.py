"""Choosing a backend by name."""

from __future__ import annotations

import pytest

from autoenvscaling.errors import UserInputError
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.sandbox.registry import get_backend


def test_short_names() -> None:
    assert isinstance(get_backend("fake"), FakeBackend)
    backend = get_backend("docker")  # lazy: no engine contact until used
    assert isinstance(backend, DockerBackend) and backend.name == "docker"


def test_dotted_path() -> None:
    assert isinstance(get_backend("autoenvscaling.sandbox.fake:FakeBackend"), FakeBackend)


@pytest.mark.parametrize("name", ["podman", "nosuch.module:X", "autoenvscaling.sandbox.fake:Nope", "a:"])
def test_bad_names(name: str) -> None:
    with pytest.raises(UserInputError):
        get_backend(name)
