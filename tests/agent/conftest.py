"""Fixtures for the agent tests: the package's in-memory fake sandbox (docker-marked tests use the real one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from autoenvscaling.sandbox.base import SandboxSpec
from autoenvscaling.sandbox.fake import FakeBackend, FakeSandbox

TERMINAL_IMAGE = "autoenv/terminal:latest"


@pytest.fixture
def fake() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
def sandbox(fake: FakeBackend) -> Iterator[FakeSandbox]:
    with fake.create(SandboxSpec(image=TERMINAL_IMAGE, name_hint="agent", workdir="/app")) as sb:
        yield sb
