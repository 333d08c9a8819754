"""Stages that write the pool: dedup (every candidate goes in, near-duplicates of valid ones are rejected)
and calibrate (the solver's pass rate on each valid new environment; the proposers' learnability rewards).

Both keep per-item logs (``results.jsonl``), so a resumed stage continues where it stopped. A pool write
that happened just before a crash, without its log line, is recognised on the redo: the entry is there with
this round and this episode as its lineage.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from autoenvscaling.agent.errors import TrajectoryError
from autoenvscaling.agent.trajectory import update_trajectory_extra
from autoenvscaling.execution.rundir import ResultsLog
from autoenvscaling.flywheel.context import RoundContext
from autoenvscaling.flywheel.crash import checkpoint
from autoenvscaling.flywheel.records import (
    AddRecord,
    CalibrateOutput,
    DedupOutput,
    DigestOutput,
    EpisodeReward,
    TaskAttempts,
    ValidateOutput,
)
from autoenvscaling.flywheel.solving import solve_tasks
from autoenvscaling.pool.calibration import CalibrationRecord, calibration_from_rewards, episode_reward
from autoenvscaling.pool.models import CalibrationBand, Lineage
from autoenvscaling.roles.proposer.records import ProposalRecord
from autoenvscaling.validate.report import ValidationReport, Verdict


def _reports(ctx: RoundContext, domain: str) -> dict[str, ValidationReport]:
    path = ctx.stage_dir("validate") / domain / "validation" / "results.jsonl"
    return {Path(r.task_path).name: r for r in ResultsLog(path, ValidationReport).load()} if path.is_file() else {}


def _final_report(report: ValidationReport, rec: ProposalRecord) -> ValidationReport:
    """The validator's report with the proposal's verdict (the novelty check can turn a valid task invalid)."""
    if rec.verdict == report.verdict.value or rec.verdict not in {v.value for v in Verdict}:
        return report
    return report.model_copy(update={"verdict": Verdict(rec.verdict), "failed_checks": list(rec.failed_checks)})


def _add_one(
    ctx: RoundContext, rec: ProposalRecord, digest: DigestOutput, report: ValidationReport | None
) -> AddRecord:
    base = AddRecord(
        key=f"{rec.domain}/{rec.id}",
        domain=rec.domain,
        proposal_id=rec.id,
        episode_dir=rec.episode_dir,
        candidate_dir=rec.candidate_dir,
        verdict=rec.verdict,
    )
    if rec.candidate_dir is None:
        return base
    try:
        lineage = Lineage(
            solver_trajectories=list(digest.trials), proposer_episode=rec.episode_dir, parent_run=ctx.paths.run_id
        )
        valid = rec.verdict == "valid"
        res = ctx.pool.add(
            Path(rec.candidate_dir),
            domain=rec.domain,
            round=ctx.n,
            source="proposer",
            lineage=lineage,
            near_duplicate="reject" if valid else "ignore",
        )
        checkpoint("pool")  # the pool write is committed, its log line not yet written
        outcome, duplicate_of = res.outcome, res.duplicate_of
        if outcome == "exact-duplicate":  # ours, if a crash came between the pool write and the log line
            entry = ctx.pool.get(res.id)
            if entry.round == ctx.n and entry.lineage.proposer_episode == rec.episode_dir:
                outcome, duplicate_of = "added", entry.duplicate_of
        status = None
        if outcome == "added" and report is not None:
            status = ctx.pool.record_validation(res.id, _final_report(report, rec)).status
        elif res.added or outcome == "added":
            status = ctx.pool.get(res.id).status
        return base.model_copy(
            update={
                "env_id": res.id if outcome != "rejected" else None,
                "outcome": outcome,
                "status": status,
                "duplicate_of": duplicate_of,
                "similarity": res.similarity if duplicate_of else None,
            }
        )
    except Exception as e:  # this candidate only (a full disk, an unreadable draft): recorded, the round goes on
        return base.model_copy(update={"outcome": "error", "error": f"{type(e).__name__}: {e}"})


def run_dedup(ctx: RoundContext, validated: ValidateOutput, digest: DigestOutput) -> DedupOutput:
    sdir = ctx.stage_dir("dedup")
    sdir.mkdir(parents=True, exist_ok=True)
    log = ResultsLog(sdir / "results.jsonl", AddRecord)
    done = {r.key: r for r in log.load()}
    ctx.events.stage_started(ctx.n, "dedup", len(validated.records))
    reports: dict[str, dict[str, ValidationReport]] = {}
    for rec in validated.records:
        key = f"{rec.domain}/{rec.id}"
        if key not in done:
            if rec.domain not in reports:
                reports[rec.domain] = _reports(ctx, rec.domain)
            add = _add_one(ctx, rec, digest, reports[rec.domain].get(rec.id))
            log.append(add)
            done[key] = add
            checkpoint("item")
        a = done[key]
        said: str = a.outcome or "no candidate"
        if a.outcome == "added" and a.status:  # an invalid candidate is kept too (dedup of later ones), as such
            said = f"added as {a.status}"
        ctx.events.advance(ctx.n, "dedup", f"{key}: {said}" + (f" ({a.error})" if a.error else ""))
    return DedupOutput(round=ctx.n, stage="dedup", adds=[done[f"{r.domain}/{r.id}"] for r in validated.records])


def run_calibrate(ctx: RoundContext, dedup: DedupOutput) -> CalibrateOutput:
    targets = [a for a in dedup.adds if a.valid_new and a.env_id is not None]
    items = [(str(a.env_id), ctx.pool.get(str(a.env_id)).path) for a in targets]
    by_env = {str(a.env_id): a for a in targets}
    band = ctx.config.calibration.band
    calibrations: dict[str, CalibrationRecord] = {}
    ctx.events.stage_started(ctx.n, "calibrate", len(items))
    with ctx.solver_factory() as (factory, solver_name), ctx.executor() as executor:

        def on_task(t: TaskAttempts) -> None:
            calibrations[t.key] = _record_calibration(ctx, t, by_env[t.key], solver_name, band)
            c = calibrations[t.key]
            note = c.error if c.pass_rate is None else f"p={c.pass_rate:.2f} -> {c.status}"
            ctx.events.advance(ctx.n, "calibrate", f"{t.key}: {note}")

        tasks = solve_tasks(
            ctx.stage_dir("calibrate"),
            items,
            backend=ctx.backend,
            agent_factory=factory,
            attempts=ctx.config.counts.calibration_attempts,
            concurrency=ctx.config.concurrency.solve,
            aliases=ctx.config.image_aliases,
            on_task=on_task,
            executor=executor,
            backend_name=ctx.config.backend,
        )
    rewards = [_reward(a, calibrations.get(str(a.env_id))) for a in dedup.adds]
    for r in rewards:
        _write_reward(r)
    return CalibrateOutput(
        round=ctx.n,
        stage="calibrate",
        solver=solver_name,
        calibrations=[calibrations[k] for k, _ in items],
        tasks=tasks,
        rewards=rewards,
    )


def _record_calibration(
    ctx: RoundContext, t: TaskAttempts, add: AddRecord, solver: str, band: CalibrationBand
) -> CalibrationRecord:
    cal = calibration_from_rewards(t.rewards, trial_dirs=[a.trial_dir for a in t.attempts], solver=solver)
    rec = CalibrationRecord(
        env_id=t.key,
        domain=add.domain,
        proposer_episode=add.episode_dir,
        attempts=len(t.attempts),
        errors=t.errors,
        calibration=cal,
    )
    if cal is None:
        errors = sorted({a.error for a in t.attempts if a.error} | ({t.error} if t.error else set()))
        return rec.model_copy(update={"error": "; ".join(errors) or "no attempt was scored"})
    try:
        entry = ctx.pool.record_calibration(t.key, cal, band=band)
    except Exception as e:  # the pool write failed for this environment: recorded, the round goes on
        return rec.model_copy(update={"error": f"{type(e).__name__}: {e}"})
    return rec.model_copy(update={"status": entry.status, "reward": episode_reward(True, cal)})


def _reward(add: AddRecord, cal: CalibrationRecord | None) -> EpisodeReward:
    calibration = cal.calibration if cal is not None else None
    return EpisodeReward(
        key=add.key,
        domain=add.domain,
        episode_dir=add.episode_dir,
        env_id=add.env_id,
        verdict=add.verdict,
        outcome=add.outcome,
        pass_rate=None if calibration is None else calibration.pass_rate,
        reward=episode_reward(add.valid_new, calibration),
    )


def _write_reward(r: EpisodeReward) -> None:
    """Put the reward on the episode's trajectory (training data for the proposer role)."""
    path = Path(r.episode_dir) / "trajectory.json"
    if not path.is_file():
        return
    # On failure the reward stays recorded in the stage output and the pool.
    with contextlib.suppress(TrajectoryError, OSError):
        update_trajectory_extra(
            path, learnability_reward=r.reward, pass_rate=r.pass_rate, env_id=r.env_id, verdict=r.verdict
        )
