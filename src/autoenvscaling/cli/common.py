"""Options and helpers shared by command groups."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from autoenvscaling.errors import UserInputError

if TYPE_CHECKING:
    from autoenvscaling.execution.executors import Executor
    from autoenvscaling.validate.probes import ProbeConfig

ImageAliasOpt = Annotated[
    list[str] | None,
    typer.Option("--image-alias", help="FROM=TO: build tasks whose base image is FROM on the local image TO."),
]
AliasFileOpt = Annotated[
    list[Path] | None, typer.Option("--alias-file", help="TOML file with an [aliases] table of FROM = TO.")
]
BackendOpt = Annotated[str, typer.Option(help="Sandbox backend: docker, fake, or pkg.module:Class.")]
RunsRootOpt = Annotated[Path, typer.Option(help="Where run directories are created.")]
TaskPathsArg = Annotated[list[Path], typer.Argument(help="Task dirs, or dirs containing task dirs.")]
ModelOpt = Annotated[str, typer.Option(help="embedded | embedded:0.5b | scripted:FILE.json | a model name.")]
BaseUrlOpt = Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint for a named model.")]
# The solver's options, shared by `solve` and `eval`.
AgentOpt = Annotated[str, typer.Option(help="llm (the model in the agent loop), oracle or nop.")]
AttemptsOpt = Annotated[int, typer.Option("--attempts", "-k", min=1, help="Attempts per task.")]
AttemptConcurrencyOpt = Annotated[int, typer.Option("--concurrency", "-n", min=1, help="Attempts at once.")]
MaxTurnsOpt = Annotated[int, typer.Option(min=1, help="Model calls per attempt.")]
ActionFormatOpt = Annotated[str, typer.Option(help="bash_block | tool_calls | json.")]
GuardsOpt = Annotated[
    str,
    typer.Option(
        help="The solver's small-model guards (review before submit, missing outputs, input previews, repeats; as "
        "in the flywheel's solver): auto (on for the embedded model and hf: checkpoints), on or off."
    ),
]
TemperatureOpt = Annotated[float | None, typer.Option(help="Sampling temperature (default: server's).")]
ExecutorOpt = Annotated[
    str, typer.Option("--executor", help="local (threads here) or ray (one Ray task per trial; the `ray` extra).")
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option("--ray-address", help="With --executor ray: auto, HOST:PORT, or unset to start Ray on this machine."),
]


def make_executor(kind: str, ray_address: str | None, thread_name: str) -> Executor:
    from autoenvscaling.execution.executors import ExecutorConfig, get_executor

    if kind not in ("local", "ray"):
        raise UserInputError(f"--executor {kind!r}: expected local or ray")
    if ray_address is not None and kind != "ray":
        raise UserInputError("--ray-address needs --executor ray")
    return get_executor(ExecutorConfig(kind=kind, address=ray_address), thread_name=thread_name)  # type: ignore[arg-type]


def preflight_docker(backend_name: str) -> None:
    """Fail early with one clear line when the engine or the base images are missing."""
    if backend_name != "docker":
        return
    from autoenvscaling.images.bootstrap import missing_images

    missing = missing_images()
    if missing:
        raise UserInputError(f"base images missing: {', '.join(missing)}; run `autoenv images bootstrap`")


def resolve_run_dir(runs_root: Path, prefix: str, run_dir: Path | None, resume: bool) -> Path:
    from autoenvscaling.execution.rundir import latest_run_dir, new_run_id

    if run_dir is not None:
        if resume and not run_dir.is_dir():
            raise UserInputError(f"--resume: {run_dir} does not exist")
        return run_dir
    if resume:
        latest = latest_run_dir(runs_root, prefix)
        if latest is None:
            raise UserInputError(f"--resume: no earlier {prefix} run under {runs_root}/")
        return latest
    return runs_root / new_run_id(prefix)


def probe_config(rules: bool, judge: str, adversarial_attempts: int) -> ProbeConfig:
    """The probes of ``--probes``, ``--judge`` and ``--adversarial-attempts`` (``autoenv propose`` too)."""
    from autoenvscaling.validate.probes import ProbeConfig

    if judge not in ("off", "advisory", "blocking"):
        raise typer.BadParameter(f"--judge {judge!r}: expected off, advisory or blocking")
    return ProbeConfig.model_validate({"enabled": rules, "judge": judge, "adversarial_attempts": adversarial_attempts})
