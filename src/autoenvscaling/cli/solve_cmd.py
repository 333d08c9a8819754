"""`autoenv solve TASK_OR_DIR...`: scored, recorded attempts of an agent on tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from autoenvscaling.cli.attempts import AttemptArgs, attempt_session
from autoenvscaling.cli.common import (
    ActionFormatOpt,
    AgentOpt,
    AliasFileOpt,
    AttemptConcurrencyOpt,
    AttemptsOpt,
    BackendOpt,
    BaseUrlOpt,
    ExecutorOpt,
    GuardsOpt,
    ImageAliasOpt,
    MaxTurnsOpt,
    ModelOpt,
    RayAddressOpt,
    RunsRootOpt,
    TaskPathsArg,
    TemperatureOpt,
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
    guards: GuardsOpt = "auto",
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
    from autoenvscaling.tasks.model import find_task_dirs

    task_dirs = find_task_dirs(paths)
    args = AttemptArgs(
        agent=agent, model=model, base_url=base_url, attempts=attempts, concurrency=concurrency,
        max_turns=max_turns, action_format=action_format, guards=guards, temperature=temperature, resume=resume,
        run_dir=run_dir, runs_root=runs_root, aliases=resolve_aliases(image_alias, alias_file), backend=backend,
        executor=executor, ray_address=ray_address,
    )  # fmt: skip
    with attempt_session("solve", args, task_dirs, console, {}) as session:
        records, summaries = session.run.run(task_dirs, resume=resume, on_done=session.on_done)

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
    rdir = session.run_dir
    console.print(f"results: {rdir}/results.jsonl  summary: {rdir}/summary.json  trials: {rdir}/trials/")


def register(app: typer.Typer) -> None:
    app.command("solve")(solve)
