"""`autoenv view`: a local read-only web viewer for runs, the pool and trajectories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console()


def view(
    path: Annotated[Path, typer.Argument(help="A run dir, a pool, or a dir of runs (default: runs).")] = Path("runs"),
    host: Annotated[
        str,
        typer.Option(help="Address to listen on (loopback by default; others are reachable by anyone on the network)."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free port).")] = 8765,
) -> None:
    """Serve a read-only web viewer over run dirs, a pool and trajectories; prints its URL."""
    from autoenvscaling.errors import UserInputError

    try:
        import markdown_it  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        raise UserInputError(f"the viewer needs the `view` extra: pip install 'autoenvscaling[view]' ({e})") from None

    from autoenvscaling.view.app import LOOPBACK_HOSTS
    from autoenvscaling.view.server import bind, check_root, serve, url_of

    root = check_root(path)
    sock = bind(host, port)
    console.print(f"serving {root} (read-only) at [bold]{url_of(sock)}[/]  (Ctrl-C stops)")
    loopback = host in LOOPBACK_HOSTS
    if not loopback:
        console.print(f"[yellow]{host} is not a loopback address: anyone who can reach it can read these runs[/]")
    # on loopback only loopback Host headers are answered (no DNS rebinding); elsewhere any name of the machine
    serve(root, sock, allowed_hosts=[] if loopback else ["*"])


def register(app: typer.Typer) -> None:
    app.command("view")(view)
