"""Fixtures shared across test folders: a tiny task writer (tasks, cli), an open pool and a dir for task dirs
(pool, export, cli)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from autoenvscaling.pool import Pool
from task_factory import MakeTask, write_task


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
