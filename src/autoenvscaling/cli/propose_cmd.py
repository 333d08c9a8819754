"""`autoenv propose`: new environments from solver trajectories (staged, workshop or prompt-only), validated."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from autoenvscaling.cli.common import BackendOpt, BaseUrlOpt, ModelOpt, preflight_docker, probe_config
from autoenvscaling.errors import UserInputError

if TYPE_CHECKING:
    from autoenvscaling.roles.proposer.records import GenerationResult, ProposalRecord
    from autoenvscaling.roles.proposer.reproduce import Reproduction, reproduction_attempts

console = Console()


def records_table(records: list[ProposalRecord], title: str) -> Table:
    table = Table(
        "id", "verdict", "failed checks", "turns", "checks", "tokens", "cost $", "gen s", "val s", title=title
    )
    colors = {"valid": "green", "invalid": "red", "error": "yellow", "timeout": "yellow"}
    for r in records:
        g = r.generation
        color = colors.get(r.verdict, "magenta")
        table.add_row(
            r.id,
            f"[{color}]{r.verdict}[/]",
            ", ".join(r.failed_checks) or "-",
            str(g.turns),
            str(g.checks_used),
            str(g.tokens),
            f"{g.cost_usd:.4f}",
            f"{g.wall_sec:.0f}",
            f"{r.validation.wall_sec:.0f}",
        )
    valid = sum(r.is_valid for r in records)
    table.add_section()
    table.add_row(
        "all",
        f"{valid}/{len(records)} valid",
        "",
        str(sum(r.generation.turns for r in records)),
        str(sum(r.generation.checks_used for r in records)),
        str(sum(r.generation.tokens for r in records)),
        f"{sum(r.generation.cost_usd for r in records):.4f}",
        f"{sum(r.generation.wall_sec for r in records):.0f}",
        f"{sum(r.validation.wall_sec for r in records):.0f}",
    )
    return table


def propose(
    mode: Annotated[
        str,
        typer.Option(
            help="auto (staged for the embedded model, agentic otherwise) | staged | agentic (workshop + "
            "check/try) | prompt (one call) | prompt-recorded (one call + recorded expectations)."
        ),
    ] = "auto",
    domain: Annotated[str, typer.Option(help="Domain pack: terminal, swe, professional, ...")] = "terminal",
    from_path: Annotated[
        Path | None, typer.Option("--from", help="Solve run dir or trials dir; omitted: no trajectories.")
    ] = None,
    n: Annotated[int, typer.Option("--n", "-n", min=1, help="Independent episodes (or calls).")] = 1,
    model: ModelOpt = "embedded",
    base_url: BaseUrlOpt = None,
    out: Annotated[Path | None, typer.Option(help="Output dir (default: runs/propose-<mode>-<time>).")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Generations at once.")] = 1,
    max_turns: Annotated[int, typer.Option(min=1, help="Agentic: model calls per episode.")] = 30,
    max_checks: Annotated[int, typer.Option(min=0, help="Agentic: `check` calls per episode.")] = 6,
    max_wall: Annotated[float, typer.Option(min=1, help="Agentic: seconds per episode.")] = 3600.0,
    start_from: Annotated[str, typer.Option(help="Agentic first draft: template or example.")] = "template",
    action_format: Annotated[str, typer.Option(help="Agentic: bash_block | tool_calls | json.")] = "bash_block",
    max_tokens: Annotated[
        int | None, typer.Option(help="Completion tokens per call (default: by mode, see roles/tuning.py).")
    ] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature (default: 0.7).")] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Validation: reference-solution runs (K).")] = 3,
    reproduce: Annotated[
        int, typer.Option(min=0, help="Blind solver attempts that must reproduce recorded expectations.")
    ] = 3,
    one_shots: Annotated[
        int,
        typer.Option(
            min=0, max=10, help="One-shot blind attempts (one script from the instruction, run once) before those."
        ),
    ] = 2,
    judge: Annotated[
        str,
        typer.Option(
            help="The alignment judge in the proposer's check and the validation (a model call per candidate, with "
            "the proposer's model): off, advisory (judge:<criterion> flags) or blocking (failed criteria reject)."
        ),
    ] = "off",
    adversarial_attempts: Annotated[
        int,
        typer.Option(
            min=0,
            help="Attempts of the proposer's model, as a solver told to pass the tests without doing the task, in "
            "the check and the validation; a confirmed exploit rejects with hackable:adversarial (0: off).",
        ),
    ] = 0,
    backend: BackendOpt = "docker",
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue the run in --out (give the options of its first invocation): the episodes, validations "
            "and blind attempts it logged are kept, the others are run.",
        ),
    ] = False,
) -> None:
    """Generate N candidate environments and validate each (K oracle runs + nop + leakage + quality probes)."""
    from autoenvscaling.execution.rundir import new_run_id
    from autoenvscaling.llm.config import parse_model_arg
    from autoenvscaling.llm.factory import open_model
    from autoenvscaling.roles.proposer.config import ProposerConfig
    from autoenvscaling.roles.proposer.domain import domain_context
    from autoenvscaling.roles.proposer.run import ProposeConfig, ProposeRun
    from autoenvscaling.roles.solver_factory import solver_agents
    from autoenvscaling.roles.tuning import MODE_CHOICES, resolve_mode, tune_roles
    from autoenvscaling.sandbox.registry import get_backend
    from autoenvscaling.validate.validator import ValidationConfig

    if mode not in MODE_CHOICES:
        raise UserInputError(f"--mode {mode!r}: expected one of {', '.join(MODE_CHOICES)}")
    mcfg = parse_model_arg(model, base_url=base_url)
    resolved = resolve_mode(mode, mcfg)
    if from_path is not None and not from_path.exists():
        raise UserInputError(f"--from {from_path}: no such directory")
    if resume:
        _check_resumable(out, resolved)
    preflight_docker(backend)
    ctx = domain_context(domain)
    out_dir = out or Path("runs") / new_run_id(f"propose-{resolved}")
    proposer = ProposerConfig.model_validate(
        {
            "max_turns": max_turns,
            "max_checks": max_checks,
            "max_wall_sec": max_wall,
            "start_from": start_from,
            "action_format": action_format,
        }
    )
    config = ProposeConfig.model_validate(
        {
            "mode": resolved,
            "n": n,
            "concurrency": concurrency,
            "from_path": from_path,
            "proposer": proposer,
            "validation": ValidationConfig(repeats=repeats, probes=probe_config(True, judge, adversarial_attempts)),
            "reproduce_attempts": reproduce,
            "reproduce_one_shots": one_shots,
        }
    )
    # The blind solver is the solver: the solver's tuning on the same model (one server when embedded).
    mcfg, solver_cfg = tune_roles(
        mcfg, resolved, propose_concurrency=concurrency, max_tokens=max_tokens, temperature=temperature
    )
    source = f"trajectories from {from_path}" if from_path else "no solver trajectories"
    console.print(f"propose ({resolved}, {domain}, {source}) x {n} with {model} -> [bold]{out_dir}[/]")
    with open_model(mcfg) as m, solver_agents(solver_cfg, config.solver, remote=False) as (blind_solver, _name):
        run = ProposeRun(
            out_dir,
            get_backend(backend),
            m,
            ctx,
            config,
            resolved_extra={
                "model_config": mcfg.model_dump(mode="json", exclude_none=True),
                "solver_model_config": solver_cfg.model_dump(mode="json", exclude_none=True),
            },
            solver_factory=blind_solver,
            probe_model=m,  # the judge and the adversary, when asked for, are the proposer's model
        )
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        ) as progress:
            gen_bar = progress.add_task("generate", total=n)
            val_bar = progress.add_task("validate", total=n, start=False)

            def on_generated(g: GenerationResult) -> None:
                made = "" if g.candidate_dir else " [red](no candidate)[/]"
                error = f" ({g.error})" if g.error else ""
                progress.console.print(
                    f"  {g.id}: {g.exit_reason}, {g.turns} turns, {g.checks_used} checks{made}{error}"
                )
                progress.advance(gen_bar)

            generations = run.generate(on_generated, resume=resume)
            progress.update(val_bar, total=sum(g.candidate_dir is not None for g in generations))
            progress.start_task(val_bar)

            def on_reproduced(gid: str, r: Reproduction) -> None:
                said = "[green]reproduced[/]" if r.reproduced else "[red]not reproduced[/]"
                progress.console.print(f"  {gid}: blind solver {said} ({reproduction_attempts(r)})")

            records = run.validate(
                generations,
                on_validated=lambda _r: progress.advance(val_bar),
                on_reproduced=on_reproduced,
                resume=resume,
            )
    console.print(records_table(records, f"propose: {resolved} / {domain}"))
    console.print(
        f"results: {out_dir}/results.jsonl  summary: {out_dir}/summary.json  candidates: {out_dir}/candidates/"
    )


def _check_resumable(out: Path | None, mode: str) -> None:
    """``--resume`` needs the run dir of a propose run made in the same mode (the mode names its episodes)."""
    import tomllib

    if out is None:
        raise UserInputError("--resume needs --out: the run dir to continue")
    config = out / "config.resolved.toml"
    if not config.is_file():
        raise UserInputError(f"--resume: {out} holds no propose run (no config.resolved.toml)")
    try:
        was = tomllib.loads(config.read_text(encoding="utf-8")).get("propose", {}).get("mode")
    except (OSError, ValueError) as e:
        raise UserInputError(f"--resume: cannot read {config}: {e}") from None
    if was != mode:
        raise UserInputError(f"--resume: {out} was run with --mode {was}, not {mode}")


def register(app: typer.Typer) -> None:
    app.command("propose")(propose)
