"""`autoenv flywheel run|resume|report`: rounds of solve -> propose -> validate -> calibrate -> train."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from autoenvscaling.cli.common import preflight_docker

if TYPE_CHECKING:
    from autoenvscaling.flywheel.metrics import RoundMetrics
    from autoenvscaling.flywheel.rounds import Flywheel

app = typer.Typer(help="The data flywheel: rounds of solve -> propose -> validate -> calibrate -> train -> eval.")
console = Console()

OverridesArg = Annotated[
    list[str] | None, typer.Argument(help="key=value overrides, e.g. rounds=2 counts.proposals=4.")
]


class RichEvents:
    """Progress bars per stage; one line per finished stage."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self._bars: dict[tuple[int, str], TaskID] = {}
        self._lock = threading.Lock()

    def stage_started(self, round_: int, stage: str, total: int | None) -> None:
        with self._lock:
            key = (round_, stage)
            if key in self._bars:
                self.progress.update(self._bars[key], total=total)
                return
            self._bars[key] = self.progress.add_task(f"round {round_} {stage}", total=total)

    def advance(self, round_: int, stage: str, note: str = "") -> None:
        with self._lock:
            if (round_, stage) not in self._bars:
                self._bars[(round_, stage)] = self.progress.add_task(f"round {round_} {stage}", total=None)
            self.progress.advance(self._bars[(round_, stage)])
        if note:
            self.progress.console.print(f"    [dim]{note}[/]", highlight=False)

    def stage_finished(self, round_: int, stage: str, summary: str, *, skipped: bool) -> None:
        with self._lock:
            bar = self._bars.pop((round_, stage), None)
            if bar is not None:
                self.progress.remove_task(bar)
        mark = "[dim]done earlier[/]" if skipped else "[green]done[/]"
        self.progress.console.print(f"round {round_} {stage}: {mark} {summary}", highlight=False)

    def message(self, text: str) -> None:
        self.progress.console.print(text, highlight=False)


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def _table(metrics: list[RoundMetrics]) -> Table:
    table = Table("round", "proposals", "valid", "learnable", "easy/hard", "pass new", "pass held-out",
                  "hackable/probed", "tokens/valid", "errors", title="flywheel")  # fmt: skip
    for m in metrics:
        table.add_row(
            str(m.round),
            str(m.proposals),
            f"{m.valid} ({_fmt(m.valid_rate)})",
            f"{m.learnable} ({_fmt(m.learnable_yield)})",
            f"{m.too_easy}/{m.too_hard}",
            _fmt(m.pass_rate_new),
            _fmt(m.pass_rate_heldout),
            f"{m.probes.hackable}/{m.probes.probed}" if m.probes.probed else "-",
            _fmt(m.tokens_per_valid_env, ".0f"),
            str(sum(m.errors.values())),
        )
    return table


def new_environments(fw: Flywheel) -> list[str]:
    """One line per environment this run added to the pool: status, solver pass rate, instruction, files."""
    from autoenvscaling.flywheel.accepted import accepted_environments

    lines: list[str] = []
    for a in accepted_environments(fw.paths, fw.config):
        rate = "-" if a.pass_rate is None else f"{a.pass_rate:.2f}"
        lines.append(
            f"round {a.round}: [bold]{a.status or 'error'}[/] {a.env_id} (solver pass rate {rate}): "
            f"{a.headline[:100]}\n    files: {a.path}"
        )
    return lines


def _drive(fw: Flywheel) -> None:
    from autoenvscaling.flywheel.report import write_report

    preflight_docker(fw.config.backend)
    console.print(f"flywheel run -> [bold]{fw.paths.root}[/]")
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as progress:
        fw.events = RichEvents(progress)
        metrics = fw.run()
    console.print(_table(metrics))
    added = new_environments(fw)
    console.print("environments accepted this run:" if added else "no environment was accepted this run")
    for line in added:
        console.print("  " + line, highlight=False)
    report = write_report(fw.paths)
    console.print(f"metrics: {fw.paths.metrics}")
    console.print(f"report:  [bold]{report}[/]")


@app.command("run")
def run(
    config: Annotated[Path, typer.Option("--config", "-c", help="Flywheel TOML config.", exists=True)],
    overrides: OverridesArg = None,
    run_dir: Annotated[Path | None, typer.Option(help="Run dir (default: <runs_root>/<name>-<time>).")] = None,
) -> None:
    """Start a flywheel run from a config file."""
    from autoenvscaling.flywheel.config import load_config
    from autoenvscaling.flywheel.rounds import Flywheel

    _drive(Flywheel.create(load_config(config, overrides or []), run_dir))


@app.command("resume")
def resume(
    run_dir: Annotated[Path, typer.Argument(help="The run dir of an interrupted (or finished) run.")],
    overrides: OverridesArg = None,
) -> None:
    """Continue a run where it stopped (finished stages are kept); overrides such as rounds=5 extend it."""
    from autoenvscaling.flywheel.rounds import Flywheel

    _drive(Flywheel.open(run_dir, overrides or []))


@app.command("report")
def report(run_dir: Annotated[Path, typer.Argument(help="A flywheel run dir.")]) -> None:
    """Rebuild report.html (plots need the `report` extra: matplotlib)."""
    from autoenvscaling.flywheel.layout import RunPaths
    from autoenvscaling.flywheel.report import write_report

    paths = RunPaths(run_dir)
    if not paths.config.is_file():
        from autoenvscaling.errors import UserInputError

        raise UserInputError(f"{run_dir}: not a flywheel run dir (no config.resolved.toml)")
    console.print(f"report: [bold]{write_report(paths)}[/]")
