"""`autoenv solve TASK_OR_DIR...`: scored, recorded attempts of an agent on tasks."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from autoenvscaling.cli.common import (
    ActionFormatOpt,
    AgentOpt,
    AliasFileOpt,
    AttemptConcurrencyOpt,
    AttemptsOpt,
    BackendOpt,
    BaseUrlOpt,
    ExecutorOpt,
    ImageAliasOpt,
    MaxTurnsOpt,
    ModelOpt,
    RayAddressOpt,
    RunsRootOpt,
    TaskPathsArg,
    TemperatureOpt,
    make_executor,
    preflight_docker,
    resolve_run_dir,
)

console = Console()


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def solve(
    paths: TaskPathsArg,
    model: ModelOpt = "embedded",
    base_url: BaseUrlOpt = None,
    agent: AgentOpt = "llm",
    attempts: AttemptsOpt = 1,
    concurrency: AttemptConcurrencyOpt = 1,
    max_turns: MaxTurnsOpt = 30,
    action_format: ActionFormatOpt = "bash_block",
    temperature: TemperatureOpt = None,
    resume: Annotated[bool, typer.Option(help="Continue the latest (or --run-dir) solve run.")] = False,
    run_dir: Annotated[Path | None, typer.Option(help="Run directory (default: runs/solve-<time>).")] = None,
    runs_root: RunsRootOpt = Path("runs"),
    image_alias: ImageAliasOpt = None,
    alias_file: AliasFileOpt = None,
    backend: BackendOpt = "docker",
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
) -> None:
    """Run an agent on tasks: fresh sandbox per attempt, agent phase, Harbor verifier; a summary table."""
    from autoenvscaling.images.aliases import resolve_aliases
    from autoenvscaling.roles.solve_run import AttemptRecord, SolveRun
    from autoenvscaling.roles.solver_factory import trial_agents
    from autoenvscaling.sandbox.registry import get_backend
    from autoenvscaling.tasks.model import find_task_dirs

    task_dirs = find_task_dirs(paths)
    aliases = resolve_aliases(image_alias, alias_file)
    preflight_docker(backend)
    rdir = resolve_run_dir(runs_root, "solve", run_dir, resume)
    loop_cfg: dict[str, object] = {"max_turns": max_turns, "action_format": action_format}
    runs_on = make_executor(executor, ray_address, "solve")
    with (
        contextlib.closing(runs_on),
        trial_agents(
            agent,
            model,
            loop_cfg,
            base_url=base_url,
            concurrency=concurrency,
            temperature=temperature,
            remote=runs_on.remote,
        ) as (factory, resolved),
    ):
        resolved.update(
            {
                "attempts": attempts,
                "concurrency": concurrency,
                "executor": runs_on.name,
                "image_aliases": aliases,
                "tasks": [str(t) for t in task_dirs],
            }
        )
        run = SolveRun(
            rdir,
            get_backend(backend),
            factory,
            attempts=attempts,
            concurrency=concurrency,
            aliases=aliases,
            resolved_config=resolved,
            executor=runs_on,
            backend_name=backend,
        )
        console.print(f"{agent} on {len(task_dirs)} task(s) x {attempts} attempt(s) -> [bold]{rdir}[/]")
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        ) as progress:
            bar = progress.add_task("attempts", total=len(task_dirs) * attempts)

            def on_done(rec: AttemptRecord) -> None:
                mark = "[red]error[/]" if rec.reward is None else f"reward {rec.reward:g}"
                progress.console.print(
                    f"  {rec.task_name} #{rec.attempt}: {mark}" + (f" ({rec.error})" if rec.error else "")
                )
                progress.advance(bar)

            records, summaries = run.run(task_dirs, resume=resume, on_done=on_done)
            progress.update(bar, completed=len(task_dirs) * attempts)

    table = Table(
        "task",
        "attempts",
        "errors",
        "solved",
        "pass@1",
        "pass@k",
        "turns",
        "tokens",
        "cost $",
        "wall s",
        title="solve",
    )
    for s in summaries:
        table.add_row(
            s.task_name,
            str(s.attempts),
            str(s.errors),
            str(s.solved),
            _fmt(s.pass_at_1),
            _fmt(s.pass_at_k),
            f"{s.mean_turns:.1f}",
            str(s.tokens),
            f"{s.cost_usd:.4f}",
            f"{s.wall_sec:.0f}",
        )
    scored = [r for r in records if r.reward is not None]
    solved = sum(r.solved for r in scored)
    table.add_section()
    table.add_row(
        "all",
        str(len(records)),
        str(len(records) - len(scored)),
        str(solved),
        _fmt(solved / len(scored) if scored else None),
        "",
        "",
        str(sum(r.input_tokens + r.output_tokens for r in records)),
        f"{sum(r.cost_usd for r in records):.4f}",
        f"{sum(r.wall_sec for r in records):.0f}",
    )
    console.print(table)
    console.print(f"results: {rdir}/results.jsonl  summary: {rdir}/summary.json  trials: {rdir}/trials/")


def register(app: typer.Typer) -> None:
    app.command("solve")(solve)
