"""`autoenv tasks ...`: static checks and a summary of Harbor task dirs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from autoenvscaling.cli.common import BaseUrlOpt, ModelOpt, TaskPathsArg

if TYPE_CHECKING:
    from autoenvscaling.tasks.lint_rules import Finding
    from autoenvscaling.tasks.model import Task

app = typer.Typer(help="Harbor task dirs: lint, judge and show.", no_args_is_help=True)
console = Console()

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


@app.command()
def lint(
    paths: TaskPathsArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print findings as JSON instead of tables.")] = False,
) -> None:
    """Static checks (no Docker). Exits 1 when any finding is an error. Each finding names the rule of Harbor 0.26's
    `harbor lint` for the same problem where there is one (docs/harbor-support.md maps them all)."""
    from autoenvscaling.images.catalog import catalog_names
    from autoenvscaling.tasks.lint import lint_task
    from autoenvscaling.tasks.model import find_task_dirs

    known = catalog_names()
    results: list[tuple[Path, list[Finding]]] = [(t, lint_task(t, known)) for t in find_task_dirs(paths)]
    errors = sum(f.severity == "error" for _, fs in results for f in fs)
    if as_json:
        payload = [{"task": str(t), "findings": [f.model_dump(mode="json") for f in fs]} for t, fs in results]
        typer.echo(json.dumps(payload, indent=2))
    else:
        for task_dir, findings in results:
            _print_findings(task_dir, findings)
        warnings = sum(f.severity == "warning" for _, fs in results for f in fs)
        console.print(f"linted {len(results)} task(s): {errors} error(s), {warnings} warning(s)")
    if errors:
        raise typer.Exit(1)


def _print_findings(task_dir: Path, findings: list[Finding]) -> None:
    title = escape(str(task_dir))
    if not findings:
        console.print(f"[green]ok[/] {title}")
        return
    table = Table(
        "severity",
        Column("rule", no_wrap=True),
        Column("harbor rule", no_wrap=True),
        "where",
        "message",
        title=title,
        title_justify="left",
    )
    for f in findings:
        where = f.file if f.line is None else f"{f.file}:{f.line}"
        style = _SEVERITY_STYLE[f.severity]
        table.add_row(f"[{style}]{f.severity}[/]", f.rule, f.harbor or "-", escape(where), escape(f.message))
    console.print(table)


@app.command()
def judge(
    paths: TaskPathsArg,
    model: ModelOpt = "embedded",
    base_url: BaseUrlOpt = None,
    blocking: Annotated[bool, typer.Option(help="Exit 1 when a criterion fails (default: advisory).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JudgeReport per line as JSON.")] = False,
) -> None:
    """Ask a model whether each task's instruction, tests and solution agree (the alignment rubric)."""
    from autoenvscaling.llm.config import parse_model_arg
    from autoenvscaling.llm.factory import open_model
    from autoenvscaling.roles.judge import CRITERIA, JudgeConfig, judge_task
    from autoenvscaling.tasks.model import find_task_dirs, load_task

    config = JudgeConfig(enabled=True, blocking=blocking)
    failed = errors = 0
    with open_model(parse_model_arg(model, base_url=base_url)) as m:
        for task_dir in find_task_dirs(paths):
            report = judge_task(load_task(task_dir), m, config)
            failed += bool(report.flags)
            errors += report.error is not None
            if as_json:
                typer.echo(report.model_dump_json())
                continue
            console.print(f"[bold]{escape(str(task_dir))}[/] ({escape(report.model)})")
            if report.error:
                console.print(f"  [red]error[/] {escape(report.error)}", soft_wrap=True)
            for r in report.criteria:
                style = {"pass": "green", "fail": "bold red"}.get(r.outcome, "dim")
                why = f": {escape(r.explanation)}" if r.explanation and r.outcome == "fail" else ""
                console.print(f"  [{style}]{r.outcome:14}[/] {r.id}{why}", soft_wrap=True)
    if not as_json:
        console.print(
            f"{failed} task(s) with a failed criterion, {errors} without an answer; criteria: {len(CRITERIA)}"
        )
    if blocking and (failed or errors):
        raise typer.Exit(1)


@app.command()
def show(path: Annotated[Path, typer.Argument(help="A task dir.")]) -> None:
    """Print the parsed task.toml and what the task dir holds; a multi-step task's steps each with their own."""
    from autoenvscaling.tasks.model import load_task

    task = load_task(path)
    cfg, paths = task.config, task.paths
    env = cfg.environment
    multi = bool(cfg.steps)
    rows: list[tuple[str, str]] = [
        ("name", task.display_name),
        ("dir", str(paths.root)),
        ("schema_version", cfg.schema_version),
        ("difficulty", str(cfg.metadata.get("difficulty", "-"))),
        ("category", str(cfg.metadata.get("category", "-"))),
        ("tags", ", ".join(str(t) for t in cfg.metadata.get("tags", [])) or "-"),
        ("agent timeout", _seconds(cfg.agent.timeout_sec)),
        ("verifier timeout", _seconds(cfg.verifier.timeout_sec)),
        ("verifier mode", cfg.verifier.environment_mode),
        ("build timeout", _seconds(env.build_timeout_sec)),
        ("image", env.docker_image or ("Dockerfile" if paths.dockerfile.is_file() else "-")),
        ("cpus / memory", f"{_or_dash(env.cpus)} / {_or_dash(env.memory_mb)} MB"),
        ("network", "on" if cfg.network_enabled else "off"),
        ("workdir", env.workdir or "(from Dockerfile)"),
        ("solution", "yes" if paths.solve_script.is_file() else "no"),
        ("tests", _names(paths.tests_dir)),
    ]
    if multi:
        rows[-2:] = [
            ("solution", "solution/solve.sh (the fallback of steps without their own)"
             if paths.solve_script.is_file() else "- (each step has its own)"),
            ("tests", f"{_names(paths.tests_dir)} (under every step's tests)"),
            ("steps", f"{len(cfg.steps)}, reward: {cfg.multi_step_reward_strategy or 'mean'} over the steps that ran"),
            ("instruction", "not used (each step has its own)"),
        ]  # fmt: skip
    else:
        rows.append(("instruction", _first_line(task.instruction)))
    unknown = cfg.unknown_key_paths()
    if unknown:
        rows.append(("unknown keys", ", ".join(unknown)))
    table = Table("field", "value", show_header=False)
    for key, value in rows:
        table.add_row(key, escape(value))
    console.print(table)
    if multi:
        console.print(_steps_table(task))


def _steps_table(task: Task) -> Table:
    """Each step as it runs (``tasks.steps``): its instruction, the solution and tests it gets, its settings."""
    from autoenvscaling.tasks.steps import StepPaths, step_config

    table = Table("#", "step", "instruction", "solution", "tests", "workdir", "agent / verifier", "min_reward",
                  title="steps", title_justify="left")  # fmt: skip
    for i, step in enumerate(task.config.steps, 1):
        sp = StepPaths(task.paths.root, step=step.name)
        cfg = step_config(task.config, step)
        try:
            instruction = _first_line(sp.instruction.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            instruction = "(missing)"
        solve = sp.solution_dir / "solve.sh"
        solution = solve.relative_to(sp.root).as_posix() if solve.is_file() else "-"
        tests: dict[str, str] = {}
        for d in sp.test_dirs:  # the step's files replace the task's of the same name, as uploaded
            tests.update({p.name: p.relative_to(sp.root).as_posix() for p in sorted(d.iterdir())})
        workdir = _names(sp.workdir_dir) if sp.workdir_dir.is_dir() else "-"
        mr = step.min_reward
        min_reward = "-" if mr is None else (f"{mr:g}" if isinstance(mr, int | float) else
                                             ", ".join(f"{k} {v:g}" for k, v in mr.items()))  # fmt: skip
        settings = (f"{_seconds(cfg.agent.timeout_sec)} / {_seconds(cfg.verifier.timeout_sec)}, "
                    f"{cfg.verifier.environment_mode}")  # fmt: skip
        table.add_row(str(i), escape(step.name), escape(instruction), escape(solution),
                      escape(", ".join(tests.values()) or "-"), escape(workdir), settings, min_reward)  # fmt: skip
    return table


def _names(directory: Path) -> str:
    return ", ".join(sorted(p.name for p in directory.iterdir())) if directory.is_dir() else "-"


def _or_dash(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:g} s"


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return "(empty)"
    first = lines[0].strip()
    return f"{first[:100]}... ({len(text)} chars)" if len(first) > 100 or len(lines) > 1 else first
