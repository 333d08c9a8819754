"""Fixtures for the model layer's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_openai_server import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    server.start()
    try:
        yield server
    finally:
        server.stop()
