"""One training run as a file-described job: ``python -m autoenvscaling.train JOB.json`` (what the flywheel's
train stage starts), writing ``result.json`` next to it. Run again on the same dir, it resumes after the last
finished step (checkpoints are kept per step) or, when ``result.json`` exists, does nothing.

Layout of ``out_dir``::

    job.json        this job
    steps.jsonl     one line per optimizer step (loss, reward mean/std, ...), written as it happens
    checkpoints/    TRL's checkpoint of the last finished step (adapter + optimizer), for resuming
    rollouts/       one trial dir per GRPO rollout (result.json, agent/commands.jsonl, verifier/)
    adapter/        the trained LoRA adapter + tokenizer + autoenv_base.json: serve it as ``hf:<out_dir>/adapter``
    result.json     TrainResult
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from types import FrameType

from pydantic import BaseModel, Field

from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.hf_model import BASE_RECORD
from autoenvscaling.train.progress import ADAPTER, RESULT, ROLLOUTS, TrainResult
from autoenvscaling.train.settings import TrainerKind, TrainSettings

JOB = "job.json"


class TrainJob(BaseModel):
    kind: TrainerKind
    settings: TrainSettings = Field(default_factory=TrainSettings)
    export_dir: str
    out_dir: str
    base_model: str = Field(description="resolved: a .gguf file, a model dir, or 'tiny'")
    init_adapter: str | None = Field(default=None, description="an earlier round's adapter to keep training")
    backend: str = "docker"
    run_id: str | None = None
    image_aliases: dict[str, str] = Field(default_factory=dict)


def run_job(job: TrainJob) -> TrainResult:
    """Train and write ``result.json``; an existing result is returned as is."""
    out = Path(job.out_dir)
    done = out / RESULT
    if done.is_file():
        return TrainResult.model_validate_json(done.read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    from autoenvscaling.train.models import TINY, load_base, with_lora

    model, tokenizer = load_base(job.base_model, job.settings.dtype)
    if job.base_model == TINY:  # random weights: keep them, so the adapter can be served on the same base
        model.save_pretrained(str(out / "tiny-base"))
        tokenizer.save_pretrained(str(out / "tiny-base"))
        job = job.model_copy(update={"base_model": str(out / "tiny-base")})
    policy = with_lora(model, job.settings, job.init_adapter)
    if job.kind == "sft":
        from autoenvscaling.train.sft import run_sft

        result = run_sft(job.settings, Path(job.export_dir) / "sft.jsonl", out, model=policy, tokenizer=tokenizer,
                         base_model=job.base_model, init_adapter=job.init_adapter)  # fmt: skip
    else:
        result = _grpo(job, out, policy, tokenizer)
    (out / ADAPTER / BASE_RECORD).write_text(json.dumps({"base_model": job.base_model}) + "\n", encoding="utf-8")
    done.write_text(result.model_dump_json(indent=2), encoding="utf-8")
    return result


def _grpo(job: TrainJob, out: Path, policy: object, tokenizer: object) -> TrainResult:
    from autoenvscaling.sandbox.registry import get_backend
    from autoenvscaling.train.environment import TaskEnvFactory
    from autoenvscaling.train.grpo import run_grpo
    from autoenvscaling.train.rows import load_rows

    rows = load_rows(Path(job.export_dir))
    if not rows.rows:
        raise UserInputError(f"{job.export_dir}: no single-step environment to train on")
    factory = TaskEnvFactory(get_backend(job.backend), out / ROLLOUTS, settings=job.settings.rollout,
                             run_id=job.run_id, image_aliases=job.image_aliases)  # fmt: skip
    result = run_grpo(job.settings, rows.rows, out, factory, model=policy, tokenizer=tokenizer,
                      base_model=job.base_model, init_adapter=job.init_adapter)  # fmt: skip
    result.notes += [f"skipped {s}" for s in rows.skipped]
    return result


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds: open rollouts are aborted and their containers removed


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m autoenvscaling.train JOB.json", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _terminate)
    try:
        job = TrainJob.model_validate_json(Path(args[0]).read_text(encoding="utf-8"))
        result = run_job(job)
    except (OSError, UserInputError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps({"adapter": result.adapter_dir, "steps": result.steps, "wall_sec": round(result.wall_sec, 1)}))
    return 0
