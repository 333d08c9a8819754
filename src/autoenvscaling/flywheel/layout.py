"""The run dir of a flywheel run, and the stage markers that make it resumable.

::

    runs/flywheel-<id>/
      config.resolved.toml            the config this run uses (resume reads only this)
      metrics.jsonl                   one RoundMetrics per finished round
      report.html  report/*.png       rebuilt after every round (`autoenv flywheel report`)
      pool/                           the environment pool (unless the config names another)
      rounds/<n>/<stage>/             one dir per stage of round n:
        output.json                     written last: the stage is done exactly when it exists
        results.jsonl                   per-item records of stages that keep them (resume continues there)
        ...                             the stage's own files (solve runs, propose runs, exports)

A stage without ``output.json`` is half done: it either continues from its per-item records or, for stages
without them, starts again from an empty dir. Nothing else decides what is finished.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from autoenvscaling.execution import rundir
from autoenvscaling.execution.rundir import write_atomic
from autoenvscaling.flywheel.records import StageOutput

STAGES = (
    "solve",
    "digest",
    "propose",
    "validate",
    "dedup",
    "calibrate",
    "export",
    "train",
    "evaluate",
    "metrics",
)
OUTPUT = "output.json"
OutT = TypeVar("OutT", bound=StageOutput)


class RunPaths:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.config = self.root / "config.resolved.toml"
        self.metrics = self.root / "metrics.jsonl"
        self.report = self.root / "report.html"
        self.report_assets = self.root / "report"
        self.rounds = self.root / "rounds"
        self.default_pool = self.root / "pool"
        self.lock = self.root / ".lock"

    @property
    def run_id(self) -> str:
        return self.root.name

    def round_dir(self, n: int) -> Path:
        return self.rounds / str(n)

    def stage_dir(self, n: int, stage: str) -> Path:
        return self.round_dir(n) / stage

    def rounds_present(self) -> list[int]:
        if not self.rounds.is_dir():
            return []
        return sorted(int(p.name) for p in self.rounds.iterdir() if p.name.isdigit())


def read_output(stage_dir: Path, model: type[OutT]) -> OutT | None:
    """The stage's output if the stage finished, else None (an unreadable one counts as unfinished)."""
    path = stage_dir / OUTPUT
    try:
        return model.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValidationError):
        return None


def write_output(stage_dir: Path, output: StageOutput) -> None:
    write_atomic(stage_dir / OUTPUT, output.model_dump_json(indent=2))


@contextmanager
def run_lock(paths: RunPaths) -> Iterator[None]:
    """One process per run dir: a second ``resume`` while the first still runs is refused."""
    with rundir.run_lock(paths.root, "flywheel"):
        yield
