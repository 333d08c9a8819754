"""`autoenv sandbox ...`: housekeeping of sandbox containers."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

app = typer.Typer(help="Sandbox containers: clean up what crashed runs left behind.", no_args_is_help=True)
console = Console()


@app.command()
def gc(
    run: Annotated[str | None, typer.Option("--run", help="Only this run id's containers.")] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Also remove containers whose creating process still runs.")
    ] = False,
) -> None:
    """Remove labelled sandbox containers whose creator is gone, and dangling labelled images."""
    from autoenvscaling.sandbox.engine import connect
    from autoenvscaling.sandbox.janitor import collect

    report = collect(connect(), run, include_live=all_)
    for name in report.containers:
        console.print(f"removed container {name}", highlight=False)
    for image in report.images:
        console.print(f"removed image {image}", highlight=False)
    if report.skipped_live:
        console.print(
            f"kept {len(report.skipped_live)} container(s) whose creator still runs (--all removes them)",
            highlight=False,
        )
    console.print(f"{len(report.containers)} container(s), {len(report.images)} image(s) removed", highlight=False)
