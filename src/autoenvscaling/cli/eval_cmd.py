"""`autoenv eval DATASET_DIR`: pass@1 / pass@k with confidence intervals of an agent on a Harbor dataset."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
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
    TemperatureOpt,
)
from autoenvscaling.errors import UserInputError

if TYPE_CHECKING:
    from autoenvscaling.roles.evaluation import EvalReport, Interval

console = Console()


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _ci(i: Interval | None) -> str:
    return "-" if i is None else f"[{100 * i.low:.1f}, {100 * i.high:.1f}]"


def eval_(
    dataset: Annotated[Path, typer.Argument(help="A Harbor dataset dir: task dirs, optionally with dataset.toml.")],
    model: ModelOpt = "embedded",
    base_url: BaseUrlOpt = None,
    agent: AgentOpt = "llm",
    attempts: AttemptsOpt = 1,
    pass_at: Annotated[
        list[int] | None, typer.Option("--pass-at", min=1, help="k of pass@k (repeatable; default 1, 2, 4.. and -k).")
    ] = None,
    confidence: Annotated[float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals.")] = 0.95,
    concurrency: AttemptConcurrencyOpt = 1,
    max_turns: MaxTurnsOpt = 30,
    action_format: ActionFormatOpt = "bash_block",
    guards: GuardsOpt = "auto",
    temperature: TemperatureOpt = None,
    resume: Annotated[bool, typer.Option(help="Continue the latest (or --run-dir) eval run.")] = False,
    run_dir: Annotated[Path | None, typer.Option(help="Run directory (default: runs/eval-<time>).")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the report here.")] = None,
    runs_root: RunsRootOpt = Path("runs"),
    image_alias: ImageAliasOpt = None,
    alias_file: AliasFileOpt = None,
    backend: BackendOpt = "docker",
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
) -> None:
    """Evaluate an agent on a Harbor dataset: attempts as `autoenv solve` makes them, then pass@k with intervals."""
    from autoenvscaling.images.aliases import resolve_aliases
    from autoenvscaling.roles.evaluation import default_ks, run_eval, write_report
    from autoenvscaling.tasks.dataset import dataset_task_dirs

    task_dirs = dataset_task_dirs(dataset)
    ks = sorted(set(pass_at)) if pass_at else default_ks(attempts)
    if ks[-1] > attempts:
        raise UserInputError(f"--pass-at {ks[-1]}: needs at least {ks[-1]} attempts per task (-k {ks[-1]})")
    args = AttemptArgs(
        agent=agent, model=model, base_url=base_url, attempts=attempts, concurrency=concurrency,
        max_turns=max_turns, action_format=action_format, guards=guards, temperature=temperature, resume=resume,
        run_dir=run_dir, runs_root=runs_root, aliases=resolve_aliases(image_alias, alias_file), backend=backend,
        executor=executor, ray_address=ray_address,
    )  # fmt: skip
    config = {"dataset": str(dataset), "pass_at": ks, "confidence": confidence}
    with attempt_session("eval", args, task_dirs, console, config) as session:
        rdir = session.run_dir
        report = run_eval(
            session.run, task_dirs, ks=ks, dataset=str(dataset), agent=args.label, resume=resume,
            confidence=confidence, on_done=session.on_done,
        )  # fmt: skip
    print_report(report)
    if json_out is not None:
        write_report(report, json_out)
    console.print(f"report: {rdir}/eval.json" + (f" and {json_out}" if json_out else "") + f"  trials: {rdir}/trials/")


def print_report(report: EvalReport) -> None:
    """Terminal-Bench's layout: one row per task, then the dataset's score with its intervals."""
    ks = [p.k for p in report.pass_at]
    table = Table("task", "attempts", "errors", "solved", *(f"pass@{k}" for k in ks), "mean reward", title="eval")
    for t in report.tasks:
        table.add_row(
            escape(t.task_name), str(t.attempts), str(t.errors), str(t.solved),
            *(_pct(t.pass_at[str(k)]) for k in ks), "-" if t.mean_reward is None else f"{t.mean_reward:.3f}",
        )  # fmt: skip
    console.print(table)
    level = f"{100 * report.confidence:g}%"
    summary = Table("metric", "value %", f"{level} CI (bootstrap over tasks)", f"{level} CI (Wilson)", "tasks")
    for p in report.pass_at:
        summary.add_row(f"pass@{p.k}", _pct(p.value), _ci(p.bootstrap), _ci(p.wilson) if p.k == 1 else "", str(p.tasks))
    console.print(summary)
    console.print(
        f"{len(report.tasks)} task(s), {report.attempts} attempt(s), {report.solved} solved, {report.errors} error(s)"
    )
    for note in report.notes:
        console.print(f"[yellow]note[/] {escape(note)}")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_)
