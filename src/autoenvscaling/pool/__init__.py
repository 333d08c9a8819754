"""The environment pool: SQLite catalog over Harbor task dirs, near-duplicate detection, calibration (its exports
are in ``export/``)."""

from autoenvscaling.pool.catalog import Pool
from autoenvscaling.pool.dedup import DedupConfig
from autoenvscaling.pool.errors import OptionalDependencyError, PoolError, UnknownEnvError
from autoenvscaling.pool.models import (
    AddResult,
    Calibration,
    CalibrationBand,
    DatasetManifest,
    EnvStatus,
    Lineage,
    PoolEntry,
)

__all__ = [
    "AddResult",
    "Calibration",
    "CalibrationBand",
    "DatasetManifest",
    "DedupConfig",
    "EnvStatus",
    "Lineage",
    "OptionalDependencyError",
    "Pool",
    "PoolEntry",
    "PoolError",
    "UnknownEnvError",
]
