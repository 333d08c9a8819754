"""Fixtures shared across test folders: an open pool and a dir for task dirs (the pool and export tests)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from autoenvscaling.pool import Pool


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[Pool]:
    with Pool.open(tmp_path / "pool") as p:
        yield p


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    d = tmp_path / "tasks"
    d.mkdir()
    return d
