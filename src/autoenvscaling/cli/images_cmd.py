"""`autoenv images ...`: build and list the offline base-image catalog."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(
    help="Offline base images (debootstrap -> docker import) and the catalog on top.", no_args_is_help=True
)
console = Console()


@app.command()
def bootstrap(
    force: Annotated[bool, typer.Option(help="Rebuild even when the inputs did not change.")] = False,
    only: Annotated[list[str] | None, typer.Option(help="Build only these catalog images (and the base).")] = None,
) -> None:
    """Build the base image and the catalog images that are missing or stale (idempotent)."""
    from autoenvscaling.images.bootstrap import bootstrap as run_bootstrap

    with console.status("bootstrapping images...") as status:
        statuses = run_bootstrap(force=force, only=only, progress=lambda msg: status.update(msg))
    table = Table("image", "action", "seconds")
    for s in statuses:
        table.add_row(s.name, s.action, f"{s.seconds:.1f}")
    console.print(table)


@app.command("list")
def list_images() -> None:
    """Show the catalog and whether each image is present."""
    from autoenvscaling.images.bootstrap import missing_images
    from autoenvscaling.images.catalog import BASE_IMAGE, CATALOG

    missing = set(missing_images())
    table = Table("image", "present", "description")
    table.add_row(BASE_IMAGE, "no" if BASE_IMAGE in missing else "yes", "Debian bookworm minbase + host CA bundle")
    for img in CATALOG:
        table.add_row(img.name, "no" if img.name in missing else "yes", img.description)
    console.print(table)
