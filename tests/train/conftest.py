"""Fixtures for the train tests: a round's export dir holding real example tasks, and the Docker backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.export.round import export_round
from autoenvscaling.pool import Pool
from autoenvscaling.pool.models import EnvStatus

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_TASKS = [REPO / "examples" / "flywheel" / "tasks" / "seed-count-words"]


def make_export(tmp_path: Path, tasks: list[Path]) -> Path:
    """What a round's export stage writes, with ``tasks`` as the learnable environments."""
    out = tmp_path / "export"
    with Pool.open(tmp_path / "pool") as pool:
        for task in tasks:
            added = pool.add(task, domain="terminal", round=1, source="import")
            pool.set_status(added.id, EnvStatus.LEARNABLE)
        export_round(pool, out, round_=1, solver_trials=[], episodes=[])
    return out


@pytest.fixture
def export_dir(tmp_path: Path) -> Path:
    return make_export(tmp_path, EXAMPLE_TASKS)
