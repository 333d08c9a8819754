"""Fixtures for the tasks tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from task_factory import MakeTask, write_task


@pytest.fixture
def make_task(tmp_path: Path) -> MakeTask:
    """``make_task(name="t", files={"rel/path": text or None})`` writes a task dir under tmp_path."""

    def make(name: str = "tiny", files: dict[str, str | None] | None = None) -> Path:
        return write_task(tmp_path / name, files)

    return make
