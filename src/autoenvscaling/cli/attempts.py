"""What `autoenv solve` and `autoenv eval` share: an agent's scored attempts on task dirs, with a progress bar.

Both commands set up the same run (Docker preflight, run dir, executor, the agent factory, the resolved config,
a ``SolveRun``) and show the same progress; they differ in what they do with the attempts afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from autoenvscaling.cli.common import make_executor, preflight_docker, resolve_run_dir

if TYPE_CHECKING:
    from autoenvscaling.roles.solve_run import AttemptRecord, SolveRun


@dataclass(frozen=True)
class AttemptArgs:
    """The command-line options of an attempts run (the names of `autoenv solve`'s options)."""

    agent: str
    model: str
    base_url: str | None
    attempts: int
    concurrency: int
    max_turns: int
    action_format: str
    guards: str
    temperature: float | None
    resume: bool
    run_dir: Path | None
    runs_root: Path
    aliases: dict[str, str]
    backend: str
    executor: str
    ray_address: str | None

    @property
    def label(self) -> str:
        """What the agent is called in output: the model for the LLM agent, else the agent's name."""
        return self.model if self.agent == "llm" else self.agent


@dataclass(frozen=True)
class AttemptSession:
    run: SolveRun
    run_dir: Path
    on_done: Callable[[AttemptRecord], None]  # prints one attempt's line and advances the bar


@contextlib.contextmanager
def attempt_session(
    kind: str, args: AttemptArgs, task_dirs: list[Path], console: Console, config: dict[str, Any]
) -> Iterator[AttemptSession]:
    """A ``SolveRun`` of ``args.agent`` on ``task_dirs`` under ``runs_root/<kind>-<time>`` (or ``args.run_dir``),
    its executor and agent factory open, and a progress bar over every attempt; ``config`` joins the resolved
    config the run dir records."""
    from autoenvscaling.roles.solve_run import SolveRun
    from autoenvscaling.roles.solver_factory import trial_agents
    from autoenvscaling.sandbox.registry import get_backend
    from autoenvscaling.tasks import load_task

    for task_dir in task_dirs:  # a task that cannot be read is the user's error, before any run dir is made
        load_task(task_dir)
    preflight_docker(args.backend)
    rdir = resolve_run_dir(args.runs_root, kind, args.run_dir, args.resume)
    loop_cfg: dict[str, object] = {"max_turns": args.max_turns, "action_format": args.action_format}
    runs_on = make_executor(args.executor, args.ray_address, kind)
    with (
        contextlib.closing(runs_on),
        trial_agents(
            args.agent,
            args.model,
            loop_cfg,
            base_url=args.base_url,
            concurrency=args.concurrency,
            temperature=args.temperature,
            guards=args.guards,
            remote=runs_on.remote,
        ) as (factory, resolved),
    ):
        resolved.update(config)
        resolved.update(
            {
                "attempts": args.attempts,
                "concurrency": args.concurrency,
                "executor": runs_on.name,
                "image_aliases": args.aliases,
                "tasks": [str(t) for t in task_dirs],
            }
        )
        run = SolveRun(
            rdir,
            get_backend(args.backend),
            factory,
            attempts=args.attempts,
            concurrency=args.concurrency,
            aliases=args.aliases,
            resolved_config=resolved,
            executor=runs_on,
            backend_name=args.backend,
        )
        total = len(task_dirs) * args.attempts
        console.print(
            f"{escape(args.label)} on {len(task_dirs)} task(s) x {args.attempts} attempt(s) -> [bold]{rdir}[/]"
        )
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        ) as progress:
            bar = progress.add_task("attempts", total=total)

            def on_done(rec: AttemptRecord) -> None:
                mark = "[red]error[/]" if rec.reward is None else f"reward {rec.reward:g}"
                error = f" ({escape(rec.error)})" if rec.error else ""
                progress.console.print(f"  {escape(rec.task_name)} #{rec.attempt}: {mark}{error}")
                progress.advance(bar)

            yield AttemptSession(run=run, run_dir=rdir, on_done=on_done)
            progress.update(bar, completed=total)
