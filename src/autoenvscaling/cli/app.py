"""The ``autoenv`` command. One module per command group; heavy imports happen inside commands."""

from __future__ import annotations

import os
import signal
import sys
from typing import NoReturn

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


_signals: list[int] = []  # the SIGINTs and SIGTERMs this command got, in order


def _stop(signum: int, frame: object) -> None:
    """Ctrl-C and SIGTERM: the first stops the run as Ctrl-C always did (its items' sandboxes removed, the
    interrupted item unrecorded; a model call under way finishes first), where SIGTERM's default action would end
    the process at once and leave its containers running; the second stops it at once."""
    _signals.append(signum)
    if len(_signals) == 1:
        err_console.print(
            "[yellow]stopping: the items under way end at their next step (a model call under way finishes "
            "first); press Ctrl-C again to stop at once[/]"
        )
    raise KeyboardInterrupt


def _exit(code: int, said: str) -> NoReturn:
    """End with ``code``. After a second Ctrl-C, or with a model server that requests still use (stopping it
    would wait for them), the process ends at once: worker threads still running are not waited for, and the
    containers they held are left to ``autoenv sandbox gc``."""
    from autoenvscaling.llm.embedded_server import abandoned

    err_console.print(f"[yellow]{said}[/]")
    if len(_signals) > 1 or abandoned():
        err_console.print(
            "[yellow]stopped at once: containers of the items under way may remain; `autoenv sandbox gc` "
            "removes them[/]"
        )
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def main() -> None:
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        app()
    except AutoEnvError as e:
        err_console.print(Text.assemble(("error: ", "bold red"), str(e)), highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        _interrupted()
    except SystemExit as e:  # typer turns an interrupt into exit status 130
        if _signals and e.code == 130:
            _interrupted()
        raise


def _interrupted() -> NoReturn:
    first = _signals[0] if _signals else signal.SIGINT
    _exit(128 + first, "terminated" if first == signal.SIGTERM else "interrupted")
