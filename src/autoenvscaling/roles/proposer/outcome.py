"""What a propose run reports: one ``ProposalRecord`` per generation (``results.jsonl``) and the run's
``ProposeSummary`` (``summary.json``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from autoenvscaling.roles.proposer.novelty import DUPLICATE_CHECK, check_novelty
from autoenvscaling.roles.proposer.records import (
    NO_CANDIDATE,
    GenerationResult,
    GenerationStats,
    Mode,
    ProposalRecord,
    ValidationStats,
)
from autoenvscaling.roles.proposer.staged.render import is_recorded
from autoenvscaling.validate.report import ValidationReport


class ProposeSummary(BaseModel):
    mode: Mode
    domain: str
    total: int
    valid: int
    self_consistent: int = 0  # recorded expectations the validator accepted
    reproduced: int = 0  # ... and a blind solver reproduced
    by_verdict: dict[str, int]
    rejection_reasons: dict[str, int]
    tokens: int
    cost_usd: float
    generation_wall_sec: float
    validation_wall_sec: float


def summarize(records: list[ProposalRecord], mode: Mode, domain: str) -> ProposeSummary:
    return ProposeSummary(
        mode=mode,
        domain=domain,
        total=len(records),
        valid=sum(r.is_valid for r in records),
        self_consistent=sum(r.validation.recorded and r.validation.verdict == "valid" for r in records),
        reproduced=sum(r.validation.reproduced for r in records),
        by_verdict=dict(Counter(r.verdict for r in records)),
        rejection_reasons=dict(Counter(c for r in records if not r.is_valid for c in r.failed_checks)),
        tokens=sum(r.generation.tokens for r in records),
        cost_usd=sum(r.generation.cost_usd for r in records),
        generation_wall_sec=sum(r.generation.wall_sec for r in records),
        validation_wall_sec=sum(r.validation.wall_sec for r in records),
    )


def proposal_record(
    gen: GenerationResult, report: ValidationReport | None, references: list[Path], threshold: float
) -> ProposalRecord:
    """One generation's record: its stats, and the validator's verdict with a copy of a reference counted as a
    failure (``duplicate``)."""
    stats = GenerationStats(
        turns=gen.turns,
        checks_used=gen.checks_used,
        tries_used=gen.tries_used,
        exit_reason=gen.exit_reason,
        prompt_tokens=gen.usage.prompt_tokens,
        completion_tokens=gen.usage.completion_tokens,
        cached_tokens=gen.usage.cached_tokens,
        cost_usd=gen.usage.cost_usd,
        wall_sec=gen.wall_sec,
        error=gen.error,
    )
    record = ProposalRecord(
        id=gen.id,
        mode=gen.mode,
        domain="",
        episode_dir=gen.episode_dir,
        candidate_dir=None,
        verdict=NO_CANDIDATE,
        failed_checks=gen.failed_checks or ["generation-error" if gen.error else NO_CANDIDATE],
        generation=stats,
        validation=ValidationStats(),
        parent=gen.parent,
    )
    if gen.candidate_dir is None or report is None:
        return record
    validation = ValidationStats(
        verdict=report.verdict.value,
        failed_checks=list(report.failed_checks),
        wall_sec=report.timings.get("total", 0.0),
        error=report.error,
        recorded=is_recorded(Path(gen.candidate_dir)),
    )
    novelty = check_novelty(Path(gen.candidate_dir), references, threshold)
    verdict, failed = report.verdict.value, list(report.failed_checks)
    if not novelty.is_new:
        failed.append(DUPLICATE_CHECK)
        verdict = "invalid" if verdict == "valid" else verdict
    if verdict == "error":
        failed = failed or ["validation-error"]
    return record.model_copy(
        update={
            "candidate_dir": gen.candidate_dir,
            "verdict": verdict,
            "failed_checks": failed,
            "validation": validation,
        }
    )
