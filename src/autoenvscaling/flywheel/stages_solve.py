"""Stages where the solver works: solve (the round's training signal), digest (what proposers read) and
evaluate (the held-out set, after training)."""

from __future__ import annotations

import shutil
from pathlib import Path

from autoenvscaling.execution.rundir import fresh_dir
from autoenvscaling.flywheel.context import RoundContext
from autoenvscaling.flywheel.domains import seed_tasks
from autoenvscaling.flywheel.layout import read_output
from autoenvscaling.flywheel.records import (
    CalibrateOutput,
    DigestOutput,
    EvaluateOutput,
    SolveOutput,
    TaskAttempts,
)
from autoenvscaling.flywheel.solving import solve_tasks
from autoenvscaling.pool.models import EnvStatus
from autoenvscaling.roles.evaluation import REPORT_FILENAME, default_ks, eval_report, write_report
from autoenvscaling.roles.proposer.digest import digest_trials, render_digest
from autoenvscaling.tasks.dataset import dataset_task_dirs
from autoenvscaling.tasks.names import slug


def solve_items(ctx: RoundContext) -> list[tuple[str, Path]]:
    """Round 1: the seed tasks. Later rounds: learnable environments of earlier rounds (newest first), topped
    up with seed tasks, so the solver's fresh trajectories show where it stands on what was just made."""
    want = ctx.config.counts.seed_tasks
    learnable = [e for e in ctx.pool.list(status=EnvStatus.LEARNABLE) if e.round < ctx.n]
    learnable.sort(key=lambda e: (-e.round, e.id))
    items = [(f"env-{e.id}", e.path) for e in learnable[:want]]
    seeds = seed_tasks(ctx.config.seed_tasks, list(ctx.domains.values()))
    items += [(f"seed-{i:02d}-{slug(p.name, max_len=60)}", p) for i, p in enumerate(seeds)][: max(0, want - len(items))]
    return items


def _solve(ctx: RoundContext, stage: str, items: list[tuple[str, Path]], attempts: int) -> list[TaskAttempts]:
    ctx.events.stage_started(ctx.n, stage, len(items))
    with ctx.solver_factory() as (factory, _name), ctx.executor() as executor:
        return solve_tasks(
            ctx.stage_dir(stage),
            items,
            backend=ctx.backend,
            agent_factory=factory,
            attempts=attempts,
            concurrency=ctx.config.concurrency.solve,
            aliases=ctx.config.image_aliases,
            on_task=lambda t: ctx.events.advance(ctx.n, stage, _note(t)),
            executor=executor,
            backend_name=ctx.config.backend,
        )


def _note(t: TaskAttempts) -> str:
    if t.error:
        return f"{t.key}: error ({t.error})"
    return f"{t.task_name or t.key}: {t.passes}/{len(t.attempts)} solved" + (f", {t.errors} errors" if t.errors else "")


def run_solve(ctx: RoundContext) -> SolveOutput:
    items = solve_items(ctx) if ctx.config.counts.seed_tasks else []
    tasks = _solve(ctx, "solve", items, ctx.config.counts.solve_attempts)
    return SolveOutput(round=ctx.n, stage="solve", solver=_model_name(ctx), tasks=tasks)


def held_out_tasks(paths: list[Path]) -> list[Path]:
    """The held-out task dirs: each path read as ``autoenv eval`` reads a dataset dir (a ``dataset.toml`` picks and
    orders its tasks), duplicates dropped."""
    found: list[Path] = []
    for p in paths:
        found += [t for t in dataset_task_dirs(p) if t not in found]
    return found


def run_evaluate(ctx: RoundContext) -> EvaluateOutput:
    """The held-out set, scored as ``autoenv eval`` scores a dataset (``roles.evaluation.eval_report``): the same
    ``SolveRun`` attempts, pass@1 and pass@k (k = the configured attempts) with their intervals, in
    ``evaluate/eval.json`` and the stage's output."""
    held_out = held_out_tasks(ctx.config.eval.tasks)
    items = [(f"eval-{i:02d}-{slug(p.name, max_len=60)}", p) for i, p in enumerate(held_out)]
    attempts = ctx.config.eval.attempts
    tasks = _solve(ctx, "evaluate", items, attempts) if items else []
    report = None
    if items:
        report = eval_report(
            [a for t in tasks for a in t.attempts],
            [(str(p), p.name) for _, p in items],
            default_ks(attempts),
            attempts_per_task=attempts,
        )
        report.dataset = ", ".join(str(p) for p in ctx.config.eval.tasks)
        report.run_dir, report.agent = str(ctx.stage_dir("evaluate")), _model_name(ctx)
        report.notes += [f"{t.key}: not attempted ({t.error})" for t in tasks if t.error]
        write_report(report, ctx.stage_dir("evaluate") / REPORT_FILENAME)
    return EvaluateOutput(round=ctx.n, stage="evaluate", solver=_model_name(ctx), tasks=tasks, report=report)


def _model_name(ctx: RoundContext) -> str:
    m = ctx.solver
    return m.name or (f"scripted:{m.scripted_path.name}" if m.scripted_path else f"{m.provider}:{m.embedded_size}")


def run_digest(ctx: RoundContext, solve: SolveOutput) -> DigestOutput:
    """Copy the trials the proposers read into ``digest/trials/``: this round's solve attempts, then the
    previous round's calibration attempts (the solver on the newest environments)."""
    out = fresh_dir(ctx.stage_dir("digest"))
    sources = [(t.key, a.trial_dir) for t in solve.tasks for a in t.attempts]
    previous = read_output(ctx.paths.stage_dir(ctx.n - 1, "calibrate"), CalibrateOutput) if ctx.n > 1 else None
    if previous is not None:
        sources += [(t.key, a.trial_dir) for t in previous.tasks for a in t.attempts]
    trials_dir = out / "trials"
    trials_dir.mkdir()
    copied: list[Path] = []
    for key, trial in sources[: ctx.config.counts.digest_trials]:
        src = Path(trial)
        if not (src / "result.json").is_file():
            continue
        dest = trials_dir / f"{key}--{src.name}"
        shutil.copytree(src, dest)
        copied.append(dest)
    digest_md = render_digest(digest_trials(copied))
    (out / "digest.md").write_text(digest_md, encoding="utf-8")
    ctx.events.advance(ctx.n, "digest", f"{len(copied)} trials")
    return DigestOutput(
        round=ctx.n, stage="digest", trials=[str(p) for p in copied], digest_path=str(out / "digest.md")
    )
