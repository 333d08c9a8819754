"""Fixtures of the security tests: a hostile-task writer and the docker backend (real engine)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile import MakeTask, write_task


@pytest.fixture
def make_task(tmp_path: Path) -> MakeTask:
    counter = iter(range(1000))

    def make(**kwargs: str) -> Path:
        return write_task(tmp_path / f"task{next(counter)}", **kwargs)

    return make
