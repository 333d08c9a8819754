"""The train stage's TRL kinds (``trl-grpo``, ``sft``): a ``train.job`` in a child process, resumable.

The child (``python -m autoenvscaling.train JOB.json``) keeps a checkpoint per optimizer step in the stage dir,
so a flywheel killed in this stage resumes the child after its last finished step; the stage dir is started
afresh only when the job itself changed. The trained LoRA adapter becomes the solver as ``hf:<adapter>``
(``llm/hf_model.py``, transformers in-process) and the next round's training continues from it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pydantic import ValidationError

from autoenvscaling.errors import UserInputError
from autoenvscaling.execution.rundir import fresh_dir
from autoenvscaling.flywheel.child import die_with_parent
from autoenvscaling.flywheel.context import RoundContext
from autoenvscaling.flywheel.records import ExportOutput, TrainOutput
from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.llm.hf_model import resolve_hf_path
from autoenvscaling.train.job import JOB, TrainJob
from autoenvscaling.train.models import resolve_base
from autoenvscaling.train.progress import RESULT, TrainResult
from autoenvscaling.train.settings import TrainerKind, TrainSettings


def base_and_adapter(ctx: RoundContext) -> tuple[str, str | None]:
    """What to train: ``[train].base_model``, else the solver's own model (its adapter too, once trained)."""
    solver, wanted = ctx.solver, ctx.config.train.base_model
    current: tuple[str, str | None] | None = None
    if solver.provider == "hf" and solver.hf_path is not None:
        current = resolve_hf_path(solver.hf_path)
    elif solver.provider == "embedded":
        current = (
            str(solver.embedded_path) if solver.embedded_path else resolve_base(f"embedded:{solver.embedded_size}"),
            None,
        )
    if not wanted:
        if current is None:
            raise UserInputError(f"train: set train.base_model (the solver {solver.name!r} has no local weights)")
        return current
    base = resolve_base(wanted)
    return (base, current[1]) if current is not None and current[0] == base else (base, None)


def _job(ctx: RoundContext, export: ExportOutput, out: Path) -> TrainJob:
    base, adapter = base_and_adapter(ctx)
    cfg = ctx.config.train
    kind: TrainerKind = "sft" if cfg.kind == "sft" else "trl-grpo"
    settings = TrainSettings.model_validate(cfg.model_dump(include=set(TrainSettings.model_fields)))
    return TrainJob(kind=kind, settings=settings, export_dir=export.export_dir, out_dir=str(out), base_model=base,
                    init_adapter=adapter, backend=ctx.config.backend, run_id=ctx.backend.run_id,
                    image_aliases=dict(ctx.config.image_aliases))  # fmt: skip


def _nothing_to_train(kind: str, export: ExportOutput) -> str | None:
    if kind == "sft" and export.sft_examples == 0:
        return "no successful solver trajectory to fine-tune on; the solver stays as it was"
    if kind == "trl-grpo" and export.learnable == 0:
        return "no learnable environment to train on; the solver stays as it was"
    return None


def _prepare(out: Path, job: TrainJob) -> None:
    """Keep the dir (and its checkpoints) when it holds this very job; otherwise start afresh."""
    path = out / JOB
    try:
        same = path.is_file() and TrainJob.model_validate_json(path.read_text(encoding="utf-8")) == job
    except (OSError, ValidationError):
        same = False
    if not same:
        fresh_dir(out)
        path.write_text(job.model_dump_json(indent=2), encoding="utf-8")


def run_trl(ctx: RoundContext, export: ExportOutput, base: TrainOutput) -> TrainOutput:
    cfg = ctx.config.train
    skip = _nothing_to_train(cfg.kind, export)
    if skip is not None:
        return base.model_copy(update={"error": skip})
    out = ctx.stage_dir("train")
    try:
        job = _job(ctx, export, out)
    except UserInputError as e:
        return base.model_copy(update={"error": str(e)})
    out.mkdir(parents=True, exist_ok=True)
    _prepare(out, job)
    log = out / "train.log"
    base = base.model_copy(update={"log_path": str(log)})
    ctx.events.stage_started(ctx.n, "train", None)
    try:
        with log.open("a", encoding="utf-8") as f:
            proc = subprocess.run(
                [sys.executable, "-m", "autoenvscaling.train", str(out / JOB)], cwd=ctx.paths.root, stdout=f,
                stderr=subprocess.STDOUT, timeout=cfg.timeout_sec, preexec_fn=die_with_parent, check=False,
            )  # fmt: skip
    except subprocess.TimeoutExpired:
        return base.model_copy(update={"error": f"training ran past {cfg.timeout_sec:g} s"})
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or [""]
        return base.model_copy(
            update={"exit_code": proc.returncode, "error": f"exit code {proc.returncode}: {tail[0][:300]}"}
        )
    result = TrainResult.model_validate_json((out / RESULT).read_text(encoding="utf-8"))
    adapter = Path(result.adapter_dir)
    solver = ModelConfig(provider="hf", name=f"hf:{adapter}", hf_path=adapter, temperature=ctx.solver.temperature,
                         max_tokens=ctx.solver.max_tokens)  # fmt: skip
    ctx.events.advance(ctx.n, "train", f"{result.steps} steps; new solver hf:{adapter}")
    return base.model_copy(update={"exit_code": 0, "solver": solver, "steps": result.log, "adapter_dir": str(adapter)})
