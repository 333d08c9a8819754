"""Records of the pool: one ``PoolEntry`` per environment, with its lineage, validation and calibration."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from autoenvscaling.validate.report import ValidationReport


class EnvStatus(StrEnum):
    CANDIDATE = "candidate"  # added, not validated yet
    VALID = "valid"
    INVALID = "invalid"
    LEARNABLE = "learnable"  # valid, and the solver's pass rate is inside the band
    TOO_EASY = "too-easy"
    TOO_HARD = "too-hard"
    RETIRED = "retired"
    DUPLICATE = "duplicate"  # near-duplicate of ``duplicate_of``


EnvSource = Literal["proposer", "import", "example"]
NearDuplicatePolicy = Literal["store", "reject", "ignore"]
DuplicateMethod = Literal["minhash", "semantic"]


class Lineage(BaseModel):
    """Where an environment came from: what the proposer read and which episode wrote it."""

    solver_trajectories: list[str] = Field(default_factory=list)  # trajectory.json paths the proposer read
    proposer_episode: str | None = None
    parent_run: str | None = None
    parent_envs: list[str] = Field(default_factory=list)  # pool ids of environments it was derived from
    origin_path: str | None = None  # the task dir it was added from


class Calibration(BaseModel):
    """The solver's attempts on one environment. Learnability 4p(1-p) peaks at a pass rate of one half."""

    attempts: int = Field(ge=0)
    passes: int = Field(ge=0)
    trial_dirs: list[str] = Field(default_factory=list)
    solver: str | None = None  # model name of the solver that made the attempts

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def learnability(self) -> float:
        p = self.pass_rate
        return 4.0 * p * (1.0 - p)


class CalibrationBand(BaseModel):
    """Pass rates strictly between ``low`` and ``high`` are learnable; at or below low too hard, at or above high
    too easy. The default keeps every environment the solver sometimes solves and sometimes fails."""

    low: float = Field(default=0.0, ge=0.0, le=1.0)
    high: float = Field(default=1.0, ge=0.0, le=1.0)

    def classify(self, calibration: Calibration) -> EnvStatus:
        p = calibration.pass_rate
        if calibration.attempts == 0 or p <= self.low:
            return EnvStatus.TOO_HARD
        if p >= self.high:
            return EnvStatus.TOO_EASY
        return EnvStatus.LEARNABLE


class PoolEntry(BaseModel):
    """One row of the catalog. ``path`` is where the Harbor task dir lies (``<pool>/envs/<id>/``)."""

    id: str
    content_hash: str
    name: str
    domain: str = ""
    round: int = 0
    status: EnvStatus
    created_at: datetime
    updated_at: datetime
    source: EnvSource
    lineage: Lineage = Field(default_factory=Lineage)
    validation: ValidationReport | None = None
    calibration: Calibration | None = None
    duplicate_of: str | None = None
    similarity: float | None = None  # to ``duplicate_of``: estimated Jaccard (minhash) or cosine (semantic)
    duplicate_method: DuplicateMethod | None = None
    instruction: str = ""
    path: Path


AddOutcome = Literal["added", "exact-duplicate", "near-duplicate", "rejected"]


class AddResult(BaseModel):
    """What ``Pool.add`` did. ``added`` is False for an exact duplicate (a no-op) and a rejected near-duplicate."""

    id: str
    outcome: AddOutcome
    added: bool
    status: EnvStatus | None = None  # the stored entry's status; None when nothing was stored
    duplicate_of: str | None = None
    similarity: float | None = None
    duplicate_method: DuplicateMethod | None = None
    source_path: str


class DatasetTask(BaseModel):
    id: str
    name: str
    path: str  # relative to the dataset dir
    content_hash: str
    domain: str
    round: int
    status: EnvStatus
    pass_rate: float | None = None


class DatasetManifest(BaseModel):
    """``dataset.json`` of an exported Harbor dataset dir: the task dirs it holds and where they came from."""

    format: Literal["autoenv-dataset/1"] = "autoenv-dataset/1"
    created_at: datetime
    statuses: list[EnvStatus]
    count: int
    tasks: list[DatasetTask]
