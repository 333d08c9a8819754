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
    images: Annotated[
        bool, typer.Option("--images", help="Also remove task images (autoenv-task/...) and the build cache.")
    ] = False,
    max_age_days: Annotated[
        float, typer.Option("--max-age-days", min=0, help="With --images: remove task images older than this.")
    ] = 7.0,
    max_size_gb: Annotated[
        float | None, typer.Option("--max-size-gb", min=0, help="With --images: then the oldest until they fit.")
    ] = None,
) -> None:
    """Remove labelled sandbox containers (and their networks and volumes) whose creator is gone, and dangling labelled
    images.

    Images a container still uses (a live run's) are never removed."""
    from autoenvscaling.sandbox.engine import connect
    from autoenvscaling.sandbox.janitor import collect, collect_images

    client = connect()
    report = collect(client, run, include_live=all_)
    if images:
        cap = None if max_size_gb is None else int(max_size_gb * 1024**3)
        img = collect_images(client, max_age_sec=max_age_days * 86400, max_total_bytes=cap)
        for tag in img.removed:
            console.print(f"removed image {tag}", highlight=False)
        console.print(
            f"{len(img.removed)} task image(s) removed ({img.freed_bytes / 1e6:.0f} MB), "
            f"{len(img.kept_in_use)} kept in use, build cache {img.build_cache_bytes / 1e6:.0f} MB freed",
            highlight=False,
        )
    for name in report.containers:
        console.print(f"removed container {name}", highlight=False)
    for image in report.images:
        console.print(f"removed image {image}", highlight=False)
    if report.skipped_live:
        console.print(
            f"kept {len(report.skipped_live)} container(s) whose creator still runs (--all removes them)",
            highlight=False,
        )
    console.print(
        f"{len(report.containers)} container(s), {len(report.networks)} network(s), {len(report.volumes)} volume(s), "
        f"{len(report.images)} image(s) removed",
        highlight=False,
    )
