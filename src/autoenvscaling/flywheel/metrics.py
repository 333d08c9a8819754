"""Per-round metrics (one line of ``metrics.jsonl`` each), computed only from the stages' outputs on disk."""

from __future__ import annotations

import statistics
from collections import Counter

from pydantic import BaseModel, Field

from autoenvscaling.flywheel.records import (
    CalibrateOutput,
    DedupOutput,
    EvaluateOutput,
    ProposeOutput,
    SolveOutput,
    StageOutput,
    TaskAttempts,
    TrainOutput,
    ValidateOutput,
)
from autoenvscaling.pool.calibration import difficulty_histogram
from autoenvscaling.pool.models import EnvStatus
from autoenvscaling.roles.proposer.records import ProposalRecord
from autoenvscaling.validate.report import ProbeCounts, probe_counts


class DomainCounts(BaseModel):
    proposals: int = 0
    valid: int = 0
    learnable: int = 0


class RoundMetrics(BaseModel):
    round: int
    solver: str = ""
    proposer: str = ""
    proposals: int = 0
    candidates: int = 0  # proposals that produced a task dir
    valid: int = 0  # valid and not a copy of an example (before dedup against the pool)
    valid_rate: float | None = None  # valid / proposals
    by_verdict: dict[str, int] = Field(default_factory=dict)
    rejection_reasons: dict[str, int] = Field(default_factory=dict)
    added: int = 0  # valid environments the pool took (what calibration attempts)
    kept_invalid: int = 0  # invalid candidates the pool keeps to catch later copies of them (never calibrated)
    near_duplicates: int = 0  # valid proposals rejected as near-duplicates of a pool entry
    exact_duplicates: int = 0
    calibrated: int = 0
    learnable: int = 0
    too_easy: int = 0
    too_hard: int = 0
    learnable_yield: float | None = None  # learnable / proposals
    mean_proposer_reward: float | None = None
    pass_rate_new: float | None = None  # the solver on this round's calibrated environments
    pass_rate_seed: float | None = None  # the solver in the solve stage
    pass_rate_heldout: float | None = None  # the solver on the held-out set, after the train stage
    difficulty_histogram: dict[str, int] = Field(default_factory=dict)
    domain_mix: dict[str, DomainCounts] = Field(default_factory=dict)
    proposer_tokens: int = 0
    proposer_cost_usd: float = 0.0
    solver_tokens: int = 0
    solver_cost_usd: float = 0.0
    tokens_per_valid_env: float | None = None  # proposer tokens / valid
    cost_per_valid_env: float | None = None
    errors: dict[str, int] = Field(default_factory=dict)  # recorded item errors per stage
    trained_solver: str | None = None
    train_error: str | None = None
    pool_size: int = 0
    pool_learnable: int = 0
    # The quality probes on this round's proposals (the validator's reports), and on those the pool accepted
    # (valid and added): probed, hackable, the hackable share and each probe's flags.
    probes: ProbeCounts = Field(default_factory=ProbeCounts)
    probes_accepted: ProbeCounts = Field(default_factory=ProbeCounts)
    stage_wall_sec: dict[str, float] = Field(default_factory=dict)


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def _pass_rate(tasks: list[TaskAttempts]) -> float | None:
    return _rate(sum(t.passes for t in tasks), sum(t.scored for t in tasks))


def _heldout_rate(evaluate: EvaluateOutput) -> float | None:
    """pass@1 as ``autoenv eval`` reports it (the mean over tasks); outputs written before the report: pooled."""
    if evaluate.report is not None:
        return next((p.value for p in evaluate.report.pass_at if p.k == 1), None)
    return _pass_rate(evaluate.tasks)


def compute_metrics(
    n: int,
    solve: SolveOutput,
    proposed: ProposeOutput,
    validated: ValidateOutput,
    dedup: DedupOutput,
    calibrate: CalibrateOutput,
    train: TrainOutput,
    evaluate: EvaluateOutput,
    *,
    pool_size: int,
    pool_learnable: int,
) -> RoundMetrics:
    records = validated.records
    valid = sum(r.is_valid for r in records)
    statuses = Counter(c.status for c in calibrate.calibrations if c.status is not None)
    rates = [c.pass_rate for c in calibrate.calibrations if c.pass_rate is not None]
    tokens = sum(r.generation.tokens for r in records)
    cost = sum(r.generation.cost_usd for r in records)
    mix: dict[str, DomainCounts] = {}
    for r in records:
        d = mix.setdefault(r.domain, DomainCounts())
        d.proposals += 1
        d.valid += r.is_valid
    for c in calibrate.calibrations:
        if c.status == EnvStatus.LEARNABLE:
            mix.setdefault(c.domain, DomainCounts()).learnable += 1
    solver_tasks = solve.tasks + calibrate.tasks
    stages: list[StageOutput] = [solve, proposed, validated, dedup, calibrate, train, evaluate]
    return RoundMetrics(
        round=n,
        solver=calibrate.solver or solve.solver,
        proposer=proposed.proposer,
        proposals=len(records),
        candidates=sum(r.candidate_dir is not None for r in records),
        valid=valid,
        valid_rate=_rate(valid, len(records)),
        by_verdict=dict(Counter(r.verdict for r in records)),
        rejection_reasons=dict(Counter(c for r in records if not r.is_valid for c in r.failed_checks)),
        added=sum(a.valid_new for a in dedup.adds),
        kept_invalid=sum(a.outcome == "added" and not a.valid_new for a in dedup.adds),
        near_duplicates=sum(a.outcome == "rejected" for a in dedup.adds),
        exact_duplicates=sum(a.outcome == "exact-duplicate" for a in dedup.adds),
        calibrated=len(rates),
        learnable=statuses[EnvStatus.LEARNABLE],
        too_easy=statuses[EnvStatus.TOO_EASY],
        too_hard=statuses[EnvStatus.TOO_HARD],
        learnable_yield=_rate(statuses[EnvStatus.LEARNABLE], len(records)),
        mean_proposer_reward=statistics.fmean(r.reward for r in calibrate.rewards) if calibrate.rewards else None,
        pass_rate_new=statistics.fmean(rates) if rates else None,
        pass_rate_seed=_pass_rate(solve.tasks),
        pass_rate_heldout=_heldout_rate(evaluate),
        difficulty_histogram=difficulty_histogram(rates),
        domain_mix=mix,
        proposer_tokens=tokens,
        proposer_cost_usd=cost,
        solver_tokens=sum(t.tokens for t in solver_tasks),
        solver_cost_usd=sum(t.cost_usd for t in solver_tasks),
        tokens_per_valid_env=tokens / valid if valid else None,
        cost_per_valid_env=cost / valid if valid else None,
        errors=_errors(solve, records, dedup, calibrate, evaluate),
        trained_solver=train.solver.name if train.solver is not None else None,
        train_error=train.error,
        pool_size=pool_size,
        pool_learnable=pool_learnable,
        probes=probe_counts(validated.probes.values()),
        probes_accepted=probe_counts(
            validated.probes[a.key] for a in dedup.adds if a.valid_new and a.key in validated.probes
        ),
        stage_wall_sec={s.stage: round(s.wall_sec, 3) for s in stages},
    )


def _errors(
    solve: SolveOutput,
    props: list[ProposalRecord],
    dedup: DedupOutput,
    calibrate: CalibrateOutput,
    evaluate: EvaluateOutput,
) -> dict[str, int]:
    counts = {
        "solve": sum(t.errors for t in solve.tasks),
        "propose": sum(r.generation.error is not None for r in props),
        "validate": sum(r.verdict == "error" for r in props),
        "dedup": sum(a.outcome == "error" for a in dedup.adds),
        "calibrate": sum(c.error is not None for c in calibrate.calibrations),
        "evaluate": sum(t.errors for t in evaluate.tasks),
    }
    return {k: v for k, v in counts.items() if v}


class MetricsOutput(StageOutput):
    metrics: RoundMetrics
