"""Training rows from a round's export dir: one row per learnable environment, in HarborSpec's columns.

``prompt`` is an empty user turn (``SandboxTaskEnv.reset`` appends the instruction, as TRL's ``HarborSpec``
does) and ``task_dir`` is what ``reset`` receives; the other columns are for logs and reports. Accepted dirs:
an export dir (``dataset/`` inside), an exported dataset (``dataset.json``), or any dir of Harbor task dirs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from autoenvscaling.errors import UserInputError
from autoenvscaling.export.pool_dataset import MANIFEST
from autoenvscaling.pool.models import DatasetManifest
from autoenvscaling.tasks.errors import TaskFormatError
from autoenvscaling.tasks.model import find_task_dirs, load_task

if TYPE_CHECKING:
    from datasets import Dataset


class TaskRow(BaseModel):
    prompt: list[dict[str, str]] = Field(default_factory=lambda: [{"role": "user", "content": ""}])
    task_dir: str
    task_name: str
    env_id: str = ""
    pass_rate: float | None = None


class TaskRows(BaseModel):
    rows: list[TaskRow]
    skipped: list[str] = Field(default_factory=list, description="task dirs left out, with the reason")


def _dataset_dir(path: Path) -> Path:
    if (path / "dataset" / MANIFEST).is_file():
        return path / "dataset"
    return path


def load_rows(path: Path) -> TaskRows:
    """The trainable tasks under ``path``, sorted by dir name. Multi-step tasks are skipped (one reward per rollout)."""
    if not path.is_dir():
        raise UserInputError(f"{path}: not a directory (expected a round's export dir or a dataset dir)")
    root = _dataset_dir(path)
    meta: dict[str, tuple[str, float | None]] = {}
    if (root / MANIFEST).is_file():
        try:
            manifest = DatasetManifest.model_validate_json((root / MANIFEST).read_text(encoding="utf-8"))
        except ValidationError as e:
            raise UserInputError(f"{root / MANIFEST}: not a dataset manifest: {e.errors()[0]['msg']}") from None
        meta = {(root / t.path).resolve().as_posix(): (t.id, t.pass_rate) for t in manifest.tasks}
    out = TaskRows(rows=[])
    for task_dir in sorted(find_task_dirs([root]), key=lambda p: p.name):
        try:
            task = load_task(task_dir)
        except TaskFormatError as e:
            out.skipped.append(f"{task_dir}: {e}")
            continue
        if task.config.is_multi_step:
            out.skipped.append(f"{task_dir}: multi-step task")
            continue
        env_id, pass_rate = meta.get(task_dir.resolve().as_posix(), ("", None))
        out.rows.append(TaskRow(task_dir=str(task_dir.resolve()), task_name=task.display_name, env_id=env_id,
                                pass_rate=pass_rate))  # fmt: skip
    return out


def as_dataset(rows: list[TaskRow]) -> Dataset:
    """A ``datasets.Dataset`` for ``GRPOTrainer(train_dataset=...)`` (needs the ``train`` extra)."""
    from datasets import Dataset

    records: list[dict[str, Any]] = [r.model_dump() for r in rows]
    return Dataset.from_list(records)
