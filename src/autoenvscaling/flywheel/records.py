"""What each stage of a round leaves on disk: one ``output.json`` per stage dir, written last (it is the stage's
completion marker), plus the per-item logs the stages keep while they run."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from autoenvscaling.export.round import RoundExport
from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.pool.calibration import CalibrationRecord
from autoenvscaling.pool.models import AddOutcome, EnvStatus
from autoenvscaling.roles.evaluation import EvalReport
from autoenvscaling.roles.proposer.records import GenerationResult, ProposalRecord
from autoenvscaling.roles.solve_run import AttemptRecord
from autoenvscaling.train.progress import StepLog
from autoenvscaling.validate.report import ProbeBrief


def utcnow() -> datetime:
    return datetime.now(UTC)


class StageOutput(BaseModel):
    round: int
    stage: str
    finished_at: datetime = Field(default_factory=utcnow)
    wall_sec: float = 0.0


class TaskAttempts(BaseModel):
    """One task's attempts in a solve-like stage (a line of the stage's ``results.jsonl``)."""

    key: str  # the task's dir under <stage>/tasks/
    task_path: str
    task_name: str = ""
    attempts: list[AttemptRecord] = Field(default_factory=list)
    error: str | None = None  # the task could not be attempted at all

    @property
    def rewards(self) -> list[float | None]:
        return [a.reward for a in self.attempts]

    @property
    def scored(self) -> int:
        return sum(a.reward is not None for a in self.attempts)

    @property
    def passes(self) -> int:
        return sum(a.solved for a in self.attempts)

    @property
    def errors(self) -> int:
        return sum(a.reward is None for a in self.attempts) + (1 if self.error else 0)

    @property
    def tokens(self) -> int:
        return sum(a.input_tokens + a.output_tokens for a in self.attempts)

    @property
    def cost_usd(self) -> float:
        return sum(a.cost_usd for a in self.attempts)


class SolveOutput(StageOutput):
    solver: str = ""
    tasks: list[TaskAttempts] = Field(default_factory=list)


class DigestOutput(StageOutput):
    trials: list[str] = Field(default_factory=list)  # trial dirs the proposers read (copied under trials/)
    digest_path: str = ""


class Generation(BaseModel):
    domain: str
    result: GenerationResult


class ProposeOutput(StageOutput):
    proposer: str = ""
    generations: list[Generation] = Field(default_factory=list)


class ValidateOutput(StageOutput):
    records: list[ProposalRecord] = Field(default_factory=list)
    # The quality probes' result of each proposal the validator reported on, and of each that the proposer's own
    # check failed on a probe (flags only), by <domain>/<proposal id>.
    probes: dict[str, ProbeBrief] = Field(default_factory=dict)


class AddRecord(BaseModel):
    """What the pool made of one proposal (a line of ``dedup/results.jsonl``)."""

    key: str  # <domain>/<proposal id>
    domain: str
    proposal_id: str
    episode_dir: str
    candidate_dir: str | None
    verdict: str  # the proposal's verdict after validation and the novelty check
    env_id: str | None = None
    outcome: AddOutcome | Literal["error"] | None = None
    status: EnvStatus | None = None
    duplicate_of: str | None = None
    similarity: float | None = None
    error: str | None = None

    @property
    def valid_new(self) -> bool:
        """A valid environment that this proposal added to the pool (what calibration attempts)."""
        return self.verdict == "valid" and self.outcome == "added" and self.env_id is not None


class DedupOutput(StageOutput):
    adds: list[AddRecord] = Field(default_factory=list)


class EpisodeReward(BaseModel):
    """A proposer episode's learnability reward, as written onto its trajectory."""

    key: str
    domain: str
    episode_dir: str
    env_id: str | None = None
    verdict: str
    outcome: str | None = None
    pass_rate: float | None = None
    reward: float = 0.0


class CalibrateOutput(StageOutput):
    solver: str = ""
    calibrations: list[CalibrationRecord] = Field(default_factory=list)
    tasks: list[TaskAttempts] = Field(default_factory=list)
    rewards: list[EpisodeReward] = Field(default_factory=list)


class ExportOutput(StageOutput, RoundExport):
    """The export stage's marker: what ``export_round`` wrote, plus the stage fields."""


class TrainOutput(StageOutput):
    kind: str = "none"
    solver: ModelConfig | None = None  # the endpoint the next stages use; None: unchanged
    exit_code: int | None = None
    log_path: str | None = None
    error: str | None = None
    steps: list[StepLog] = Field(default_factory=list)  # trl-grpo / sft: the training curve, one entry per step
    adapter_dir: str | None = None


class EvaluateOutput(StageOutput):
    solver: str = ""
    tasks: list[TaskAttempts] = Field(default_factory=list)
    report: EvalReport | None = None  # pass@k with intervals, as `autoenv eval` scores (also evaluate/eval.json)
