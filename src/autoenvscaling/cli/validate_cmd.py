"""`autoenv validate PATH...`: is each task a valid environment?"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from autoenvscaling.cli.common import (
    ActionFormatOpt,
    AliasFileOpt,
    BackendOpt,
    BaseUrlOpt,
    ExecutorOpt,
    ImageAliasOpt,
    MaxTurnsOpt,
    RayAddressOpt,
    RunsRootOpt,
    TaskPathsArg,
    make_executor,
    preflight_docker,
    probe_config,
    resolve_run_dir,
)

if TYPE_CHECKING:
    from autoenvscaling.validate.model_probes import ModelProbes
    from autoenvscaling.validate.probes import ProbeConfig
    from autoenvscaling.validate.report import ValidationReport

console = Console()
_VERDICT_STYLE = {"valid": "green", "invalid": "red", "error": "magenta", "timeout": "yellow"}


def _rewards(values: list[float | None]) -> str:
    return " ".join("-" if x is None else f"{x:g}" for x in values)


def _mutation(report: ValidationReport) -> str:
    score = report.probes.mutation_score if report.probes else None
    return "-" if score is None else f"{score:.2f}"


def validate(
    paths: TaskPathsArg,
    repeats: Annotated[int, typer.Option("--repeats", "-k", min=1, help="Oracle runs; all must score 1.")] = 3,
    concurrency: Annotated[int, typer.Option("--concurrency", "-n", min=1, help="Tasks validated at once.")] = 1,
    resume: Annotated[bool, typer.Option(help="Continue the latest (or --run-dir) run; skip finished tasks.")] = False,
    run_dir: Annotated[Path | None, typer.Option(help="Run directory (default: runs/validate-<time>).")] = None,
    runs_root: RunsRootOpt = Path("runs"),
    image_alias: ImageAliasOpt = None,
    alias_file: AliasFileOpt = None,
    backend: BackendOpt = "docker",
    nop: Annotated[bool, typer.Option(help="Run the do-nothing agent (must score 0).")] = True,
    force_build: Annotated[bool, typer.Option(help="Rebuild task images without the layer cache.")] = False,
    strict: Annotated[bool, typer.Option(help="Exit 1 when any task is not valid.")] = False,
    probes: Annotated[
        bool,
        typer.Option(
            help="Quality probes after the other checks pass: scripted exploits (hackable:*), answer in the image "
            "(leak-answer), mutants of the reference output (weak-tests). On for generated environments."
        ),
    ] = False,
    judge: Annotated[
        str,
        typer.Option(
            help="The alignment judge (a model call per task): off, advisory (judge:<criterion> flags) or blocking "
            "(failed criteria fail the task)."
        ),
    ] = "off",
    adversarial_attempts: Annotated[
        int,
        typer.Option(
            min=0,
            help="Attempts of the solver model told to pass the tests without doing the task; a confirmed exploit "
            "flags hackable:adversarial (0: off).",
        ),
    ] = 0,
    model: Annotated[str, typer.Option(help="The model of --judge and --adversarial-attempts (see solve).")] = (
        "embedded"
    ),
    base_url: BaseUrlOpt = None,
    max_turns: MaxTurnsOpt = 30,
    action_format: ActionFormatOpt = "bash_block",
    pass_env: Annotated[
        list[str] | None,
        typer.Option(
            "--pass-env", help="A host variable ${VAR} in task env tables may use (repeatable; none by default)."
        ),
    ] = None,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
) -> None:
    """Lint, build, check leakage, run the oracle K times and the nop agent; a verdict per task."""
    from autoenvscaling.images.aliases import resolve_aliases
    from autoenvscaling.sandbox.registry import get_backend
    from autoenvscaling.tasks.model import find_task_dirs
    from autoenvscaling.validate.report import describe_check
    from autoenvscaling.validate.run import ValidationRun
    from autoenvscaling.validate.validator import ValidationConfig

    task_dirs = find_task_dirs(paths)
    aliases = resolve_aliases(image_alias, alias_file)
    preflight_docker(backend)
    rdir = resolve_run_dir(runs_root, "validate", run_dir, resume)
    config = ValidationConfig(
        repeats=repeats,
        run_nop=nop,
        pass_env=list(pass_env or []),
        probes=probe_config(probes, judge, adversarial_attempts),
    )
    stack = contextlib.ExitStack()
    model_probes = _open_model_probes(
        stack, config.probes, model, base_url, max_turns, action_format, remote=executor != "local"
    )
    try:
        runs_on = make_executor(executor, ray_address, "validate")
    except BaseException:
        stack.close()
        raise
    run = ValidationRun(
        rdir,
        get_backend(backend),
        config,
        aliases=aliases,
        concurrency=concurrency,
        force_build=force_build,
        executor=runs_on,
        backend_name=backend,
        model_probes=model_probes,
    )
    console.print(f"validating {len(task_dirs)} task(s) -> [bold]{rdir}[/]")
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    with progress:
        bar = progress.add_task("tasks", total=len(task_dirs))
        lines: dict[str, TaskID] = {}

        def on_status(name: str, phase: str) -> None:
            if name not in lines:
                lines[name] = progress.add_task(f"  {name}", total=None)
            progress.update(lines[name], description=f"  {name}: {phase}")

        def on_done(report: object) -> None:
            from autoenvscaling.validate.report import ValidationReport

            assert isinstance(report, ValidationReport)
            if report.task_name in lines:
                progress.remove_task(lines.pop(report.task_name))
            style = _VERDICT_STYLE[report.verdict.value]
            progress.console.print(
                f"  [{style}]{report.verdict.value:8}[/] {report.task_name}"
                + (f"  ({', '.join(report.failed_checks)})" if report.failed_checks else "")
            )
            progress.advance(bar)

        before = len(task_dirs)
        try:
            reports, summary = run.run(task_dirs, resume=resume, on_status=on_status, on_done=on_done)
        finally:
            runs_on.close()
            stack.close()
        progress.update(bar, completed=before)

    columns = ["task", "verdict", "failed checks / error", "oracle", "nop"] + (["mutation"] if probes else [])
    table = Table(*columns, "seconds", title="validation")
    for r in reports:
        oracle = [t.reward for t in r.trials if t.agent == "oracle"]
        nop_r = [t.reward for t in r.trials if t.agent == "nop"]
        detail = r.error or "\n".join(f"{c}: {describe_check(c)}" for c in r.failed_checks)
        style = _VERDICT_STYLE[r.verdict.value]
        table.add_row(
            r.task_name,
            f"[{style}]{r.verdict.value}[/]",
            detail,
            _rewards(oracle),
            _rewards(nop_r),
            *([_mutation(r)] if probes else []),
            f"{r.timings.get('total', 0):.1f}",
        )
    console.print(table)
    counts = ", ".join(f"{v} {k}" for k, v in sorted(summary.by_verdict.items()))
    if config.probes.any:
        flags = ", ".join(f"{v} {k}" for k, v in sorted(summary.probe_flags.items())) or "none"
        console.print(f"probed {summary.probed} task(s): {summary.hackable} hackable; probe flags: {flags}")
    console.print(f"{summary.total} task(s): {counts}.  results: {rdir}/results.jsonl  summary: {rdir}/summary.json")
    if summary.by_verdict.get("error") or (strict and summary.by_verdict.get("valid", 0) != summary.total):
        raise typer.Exit(1)


def _open_model_probes(
    stack: contextlib.ExitStack,
    probes: ProbeConfig,
    model: str,
    base_url: str | None,
    turns: int,
    fmt: str,
    *,
    remote: bool,
) -> ModelProbes | None:
    """The model of the judge and the adversarial solver, opened only when one of them is asked for; ``remote``
    (Ray): a model each worker opens itself (a served one: the embedded model is refused)."""
    if not probes.model_probes:
        return None
    from autoenvscaling.agent.config import AgentConfig
    from autoenvscaling.llm.base import Model
    from autoenvscaling.llm.config import parse_model_arg
    from autoenvscaling.llm.factory import open_model
    from autoenvscaling.roles.adversary import model_probes_for
    from autoenvscaling.roles.remote_solver import RemoteModel
    from autoenvscaling.roles.tuning import tune_solver

    tuned = tune_solver(parse_model_arg(model, base_url=base_url))
    m: Model = RemoteModel(tuned) if remote else stack.enter_context(open_model(tuned))
    return model_probes_for(probes, m, AgentConfig(max_turns=turns, action_format=fmt))


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
