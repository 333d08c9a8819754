"""Reading validate, solve and propose run dirs and trial dirs into what the pages show. Nothing here writes:
``ResultsLog.load`` would cut a torn last line, so results files are parsed here line by line instead."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from autoenvscaling.roles.proposer.records import ProposalRecord
from autoenvscaling.roles.solve_run import AttemptRecord, TaskSummary, summarize_task
from autoenvscaling.validate.report import ValidationReport, ValidationSummary, describe_check
from autoenvscaling.verify.results import TrialResult
from autoenvscaling.view.files import PREVIEW_BYTES, Root, read_text
from autoenvscaling.view.runs import read_json

T = TypeVar("T", bound=BaseModel)
TRIAL_LOGS = (
    "agent/oracle.txt",
    "agent/stdout.txt",
    "verifier/test-stdout.txt",
    "verifier/reward.txt",
    "verifier/reward.json",
)


def read_records(path: Path, model: type[T]) -> list[T]:
    """Every line of a JSONL file that parses as ``model`` (a torn last line of a running job is skipped)."""
    out: list[T] = []
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            out.append(model.model_validate_json(line))
        except ValidationError:
            continue
    return out


def read_model(path: Path, model: type[T]) -> T | None:
    try:
        return model.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None


class CheckRow(BaseModel):
    id: str
    passed: bool
    detail: str
    description: str


class ValidationRow(BaseModel):
    report: ValidationReport
    checks: list[CheckRow]
    trial_links: dict[str, str | None]  # trial name -> trial dir under the root


class ValidationRunView(BaseModel):
    rows: list[ValidationRow]
    summary: ValidationSummary | None
    phase_sec: dict[str, float]


def validation_run(root: Root, run: Path) -> ValidationRunView:
    reports = read_records(run / "results.jsonl", ValidationReport)
    rows = []
    for r in reports:
        checks = [CheckRow(**c.model_dump(), description=describe_check(c.id)) for c in r.checks]
        links = {t.trial_name: root.link(str(run / "trials" / t.trial_name)) for t in r.trials}
        rows.append(ValidationRow(report=r, checks=checks, trial_links=links))
    summary = read_model(run / "summary.json", ValidationSummary)
    phases: dict[str, float] = dict(summary.phase_sec) if summary else {}
    if not phases:  # still running: add up what finished
        for r in reports:
            for t in r.trials:
                for k, v in t.phases.items():
                    phases[k] = phases.get(k, 0.0) + v
    return ValidationRunView(rows=rows, summary=summary, phase_sec=phases)


class AttemptRow(BaseModel):
    record: AttemptRecord
    trial: str | None  # the trial dir under the root
    trajectory: str | None


class SolveTask(BaseModel):
    summary: TaskSummary
    attempts: list[AttemptRow]


def attempt_rows(root: Root, run: Path, records: list[AttemptRecord]) -> list[AttemptRow]:
    rows = []
    for rec in records:
        trial = root.locate(rec.trial_dir, run)
        traj = trial / "agent" / "trajectory.json" if trial is not None else None
        rows.append(
            AttemptRow(
                record=rec,
                trial=root.rel(trial) if trial is not None else None,
                trajectory=root.rel(traj) if traj is not None and traj.is_file() else None,
            )
        )
    return rows


def solve_run(root: Root, run: Path) -> list[SolveTask]:
    records = read_records(run / "results.jsonl", AttemptRecord)
    by_task: dict[str, list[AttemptRecord]] = {}
    for rec in sorted(records, key=lambda r: (r.task_path, r.attempt)):
        by_task.setdefault(rec.task_path, []).append(rec)
    return [
        SolveTask(summary=summarize_task(recs[0].task_name, recs), attempts=attempt_rows(root, run, recs))
        for recs in by_task.values()
    ]


class ProposalRow(BaseModel):
    record: ProposalRecord
    episode: str | None
    trajectory: str | None
    candidate: str | None


class ProposeRunView(BaseModel):
    rows: list[ProposalRow]
    summary: dict[str, object]
    validation: str | None  # the run's own validation run dir
    digest: str | None


def _proposal_rows(root: Root, run: Path, records: list[ProposalRecord]) -> list[ProposalRow]:
    rows = []
    for rec in records:
        episode = root.locate(rec.episode_dir, run)
        traj = episode / "trajectory.json" if episode is not None else None
        rows.append(
            ProposalRow(
                record=rec,
                episode=root.rel(episode) if episode is not None else None,
                trajectory=root.rel(traj) if traj is not None and traj.is_file() else None,
                candidate=root.link(rec.candidate_dir, run),
            )
        )
    return rows


def propose_run(root: Root, run: Path, records: list[ProposalRecord] | None = None) -> ProposeRunView:
    """A propose run dir, or one domain dir of a flywheel propose stage (whose records the validate stage
    keeps: pass them as ``records``)."""
    if records is None:
        records = read_records(run / "results.jsonl", ProposalRecord)
    summary = read_json(run / "summary.json")
    validation = run / "validation"
    return ProposeRunView(
        rows=_proposal_rows(root, run, records),
        summary=summary if isinstance(summary, dict) else {},
        validation=root.rel(validation) if validation.is_dir() else None,
        digest=root.rel(run / "digest.md") if (run / "digest.md").is_file() else None,
    )


class LogFile(BaseModel):
    rel: str
    name: str
    size: int
    preview: str | None  # the start of the known logs; None for other files


class TrialView(BaseModel):
    name: str
    result: TrialResult | None
    phases: dict[str, float]
    logs: list[LogFile]
    trajectory: str | None


def trial(root: Root, trial_dir: Path) -> TrialView:
    result = read_model(trial_dir / "result.json", TrialResult)
    logs = []
    for f in sorted(p for p in trial_dir.rglob("*") if p.is_file() and root.inside(p)):
        rel = f.relative_to(trial_dir).as_posix()
        if rel in ("result.json", "agent/trajectory.json"):
            continue
        preview = read_text(f, PREVIEW_BYTES) if rel in TRIAL_LOGS else None
        logs.append(LogFile(rel=root.rel(f), name=rel, size=f.stat().st_size, preview=preview))
    traj = trial_dir / "agent" / "trajectory.json"
    return TrialView(
        name=trial_dir.name,
        result=result,
        phases=result.phase_seconds() if result else {},
        logs=logs,
        trajectory=root.rel(traj) if traj.is_file() else None,
    )
