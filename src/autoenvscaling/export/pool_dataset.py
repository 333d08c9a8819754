"""Hand-off formats of the pool: a Harbor dataset dir (task dirs + ``dataset.json``) and a parquet table.

``export_harbor_dataset`` (``harbor_dataset``) adds Harbor's ``dataset.toml`` to the first."""

from __future__ import annotations

import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autoenvscaling.errors import UserInputError
from autoenvscaling.pool.catalog import Pool, StatusFilter, parse_statuses
from autoenvscaling.pool.errors import OptionalDependencyError
from autoenvscaling.pool.models import DatasetManifest, DatasetTask, EnvStatus, PoolEntry
from autoenvscaling.tasks.names import slug

MANIFEST = "dataset.json"


def export_dataset(pool: Pool, dest: Path | str, *, status: StatusFilter = EnvStatus.LEARNABLE) -> DatasetManifest:
    """Copy the matching task dirs into ``dest`` (a Harbor dataset dir) and write ``dataset.json``: written next
    to ``dest`` and renamed into place, replacing an earlier export there."""
    statuses = parse_statuses(status) or list(EnvStatus)
    dest = Path(dest).resolve()
    if dest.exists() and any(dest.iterdir()) and not (dest / MANIFEST).is_file():
        raise UserInputError(f"{dest}: exists and is not an exported dataset; choose an empty or new dir")
    entries = pool.list(status=statuses)
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = dest.parent / f".{dest.name}.tmp-{uuid.uuid4().hex[:8]}"
    work.mkdir()
    try:
        tasks = _copy_entries(entries, work)
        manifest = DatasetManifest(created_at=datetime.now(UTC), statuses=statuses, count=len(tasks), tasks=tasks)
        (work / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
        if dest.exists():
            shutil.rmtree(dest)
        work.rename(dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return manifest


def _copy_entries(entries: list[PoolEntry], out: Path) -> list[DatasetTask]:
    tasks: list[DatasetTask] = []
    used: set[str] = set()
    for entry in entries:
        name = slug(entry.name)
        if name in used:
            name = f"{name}-{entry.id[:8]}"
        used.add(name)
        shutil.copytree(entry.path, out / name)
        tasks.append(
            DatasetTask(
                id=entry.id,
                name=entry.name,
                path=name,
                content_hash=entry.content_hash,
                domain=entry.domain,
                round=entry.round,
                status=entry.status,
                pass_rate=None if entry.calibration is None else entry.calibration.pass_rate,
            )
        )
    return tasks


def _row(entry: PoolEntry) -> dict[str, Any]:
    cal, val = entry.calibration, entry.validation
    return {
        "id": entry.id,
        "content_hash": entry.content_hash,
        "name": entry.name,
        "domain": entry.domain,
        "round": entry.round,
        "status": entry.status.value,
        "source": entry.source,
        "created_at": entry.created_at,
        "path": str(entry.path),
        "instruction": entry.instruction,
        "duplicate_of": entry.duplicate_of,
        "similarity": entry.similarity,
        "verdict": None if val is None else val.verdict.value,
        "failed_checks": [] if val is None else val.failed_checks,
        "attempts": None if cal is None else cal.attempts,
        "passes": None if cal is None else cal.passes,
        "pass_rate": None if cal is None else cal.pass_rate,
        "learnability": None if cal is None else cal.learnability,
        "lineage": entry.lineage.model_dump_json(),
        "validation": None if val is None else val.model_dump_json(),
        "calibration": None if cal is None else cal.model_dump_json(),
    }


def export_parquet(pool: Pool, path: Path | str, *, status: StatusFilter = None) -> Path:
    """One row per entry (pyarrow, from the ``report`` extra)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise OptionalDependencyError("parquet export needs pyarrow: pip install 'autoenvscaling[report]'") from None
    text, num = pa.string(), pa.float64()
    schema = pa.schema(
        [("id", text), ("content_hash", text), ("name", text), ("domain", text), ("round", pa.int64()),
         ("status", text), ("source", text), ("created_at", pa.timestamp("us", tz="UTC")), ("path", text),
         ("instruction", text), ("duplicate_of", text), ("similarity", num), ("verdict", text),
         ("failed_checks", pa.list_(text)), ("attempts", pa.int64()), ("passes", pa.int64()),
         ("pass_rate", num), ("learnability", num), ("lineage", text), ("validation", text),
         ("calibration", text)]
    )  # fmt: skip
    table = pa.Table.from_pylist([_row(e) for e in pool.list(status=status)], schema=schema)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path
