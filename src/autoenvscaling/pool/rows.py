"""Conversion between ``envs`` rows and ``PoolEntry`` models (JSON columns parsed into sub-models)."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from autoenvscaling.pool.models import Calibration, EnvStatus, Lineage, PoolEntry
from autoenvscaling.validate.report import ValidationReport

COLUMNS = (
    "id, content_hash, name, domain, round, status, created_at, updated_at, source, lineage,"
    " validation, calibration, duplicate_of, similarity, duplicate_method, instruction"
)


def entry_from_row(row: sqlite3.Row | tuple[object, ...], envs_dir: Path) -> PoolEntry:
    (env_id, content_hash, name, domain, round_, status, created, updated, source, lineage, validation,
     calibration, duplicate_of, sim, method, instruction) = tuple(row)  # fmt: skip
    return PoolEntry(
        id=str(env_id),
        content_hash=str(content_hash),
        name=str(name),
        domain=str(domain),
        round=int(str(round_)),
        status=EnvStatus(status),
        created_at=datetime.fromisoformat(str(created)),
        updated_at=datetime.fromisoformat(str(updated)),
        source=str(source),  # type: ignore[arg-type]  # validated by pydantic
        lineage=Lineage.model_validate_json(str(lineage)),
        validation=None if validation is None else ValidationReport.model_validate_json(str(validation)),
        calibration=None if calibration is None else Calibration.model_validate_json(str(calibration)),
        duplicate_of=None if duplicate_of is None else str(duplicate_of),
        similarity=None if sim is None else float(str(sim)),
        duplicate_method=None if method is None else str(method),  # type: ignore[arg-type]  # validated
        instruction=str(instruction),
        path=envs_dir / str(env_id),
    )
