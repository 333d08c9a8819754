"""The ``autoenv`` command. One module per command group; heavy imports happen inside commands."""

from __future__ import annotations

import signal
import sys

import typer
from rich.console import Console
from rich.text import Text

from autoenvscaling.errors import AutoEnvError

app = typer.Typer(
    name="autoenv",
    help="Build, validate and calibrate RL environments for terminal agents (Harbor task format).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
err_console = Console(stderr=True)


def _register() -> None:
    from autoenvscaling.cli import images_cmd, model_cmd, sandbox_cmd, solve_cmd, tasks_cmd, validate_cmd

    app.add_typer(tasks_cmd.app, name="tasks")
    app.add_typer(images_cmd.app, name="images")
    app.add_typer(sandbox_cmd.app, name="sandbox")
    app.add_typer(model_cmd.app, name="model")
    validate_cmd.register(app)
    solve_cmd.register(app)
    from autoenvscaling.cli import eval_cmd

    eval_cmd.register(app)
    from autoenvscaling.cli import propose_cmd

    propose_cmd.register(app)
    from autoenvscaling.cli import pool_cmd

    app.add_typer(pool_cmd.app, name="pool")
    from autoenvscaling.cli import flywheel_cmd

    app.add_typer(flywheel_cmd.app, name="flywheel")
    from autoenvscaling.cli import view_cmd

    view_cmd.register(app)


_register()


_terminated: list[int] = []  # the SIGTERM that stopped the command, if one did


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM, raised where Ctrl-C would be: the run stops the same way (its items' sandboxes removed, the
    interrupted item unrecorded), where the signal's default action would end the process at once and leave its
    containers running until the next ``--resume`` or ``autoenv sandbox gc``."""
    _terminated.append(signum)
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    try:
        app()
    except AutoEnvError as e:
        err_console.print(Text.assemble(("error: ", "bold red"), str(e)), highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("[yellow]terminated[/]" if _terminated else "[yellow]interrupted[/]")
        sys.exit(128 + _terminated[0] if _terminated else 130)
    except SystemExit as e:  # typer turns an interrupt into exit status 130
        if _terminated and e.code == 130:
            err_console.print("[yellow]terminated[/]")
            sys.exit(128 + _terminated[0])
        raise
