"""Stages where the solver works: solve (the round's training signal), digest (what proposers read) and
evaluate (the held-out set, after training)."""

from __future__ import annotations

import shutil
from pathlib import Path

from autoenvscaling.execution.rundir import fresh_dir
from autoenvscaling.flywheel.context import RoundContext, slug
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
from autoenvscaling.roles.proposer.digest import digest_trials, render_digest
from autoenvscaling.tasks import find_task_dirs


def solve_items(ctx: RoundContext) -> list[tuple[str, Path]]:
    """Round 1: the seed tasks. Later rounds: learnable environments of earlier rounds (newest first), topped
    up with seed tasks, so the solver's fresh trajectories show where it stands on what was just made."""
    want = ctx.config.counts.seed_tasks
    learnable = [e for e in ctx.pool.list(status=EnvStatus.LEARNABLE) if e.round < ctx.n]
    learnable.sort(key=lambda e: (-e.round, e.id))
    items = [(f"env-{e.id}", e.path) for e in learnable[:want]]
    seeds = seed_tasks(ctx.config.seed_tasks, list(ctx.domains.values()))
    items += [(f"seed-{i:02d}-{slug(p.name)}", p) for i, p in enumerate(seeds)][: max(0, want - len(items))]
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


def run_evaluate(ctx: RoundContext) -> EvaluateOutput:
    held_out = find_task_dirs(ctx.config.eval.tasks) if ctx.config.eval.tasks else []
    items = [(f"eval-{i:02d}-{slug(p.name)}", p) for i, p in enumerate(held_out)]
    tasks = _solve(ctx, "evaluate", items, ctx.config.eval.attempts) if items else []
    return EvaluateOutput(round=ctx.n, stage="evaluate", solver=_model_name(ctx), tasks=tasks)


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
