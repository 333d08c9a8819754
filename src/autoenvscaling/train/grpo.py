"""GRPO with TRL over our sandbox: ``GRPOTrainer(environment_factory=TaskEnvFactory(...))`` with LoRA.

Each step takes ``prompts_per_step`` environments x ``num_generations`` rollouts; a rollout is the model's turns
with ``bash`` calls (at most ``max_tool_calling_iterations``) in a fresh container of its task, scored by the
task's own tests. A checkpoint is saved every step, so a killed run resumes after its last finished step.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from autoenvscaling.train.environment import TaskEnvFactory
from autoenvscaling.train.progress import (
    ADAPTER,
    CHECKPOINTS,
    STEPS,
    TrainResult,
    gpu_peak_mb,
    peak_rss_mb,
    read_steps,
    step_callback,
)
from autoenvscaling.train.rows import TaskRow, as_dataset
from autoenvscaling.train.settings import TrainSettings
from autoenvscaling.train.toolcalls import read_bare_json_calls


def grpo_config(settings: TrainSettings, out_dir: Path, n_rows: int) -> Any:
    import torch
    from trl import GRPOConfig

    gpu = torch.cuda.is_available()
    prompts = min(settings.prompts_per_step, n_rows)
    return GRPOConfig(
        output_dir=str(out_dir / CHECKPOINTS),
        max_steps=settings.steps,
        per_device_train_batch_size=prompts * settings.num_generations,
        gradient_accumulation_steps=1,
        num_generations=settings.num_generations,
        max_completion_length=settings.max_completion_length,
        max_tool_calling_iterations=settings.max_tool_calling_iterations,
        learning_rate=settings.learning_rate,
        temperature=settings.temperature,
        beta=settings.beta,
        seed=settings.seed,
        logging_steps=1,
        save_strategy="steps",
        save_steps=1,
        save_total_limit=1,
        report_to="none",
        use_cpu=not gpu,
        bf16=gpu and settings.dtype != "float32",
        gradient_checkpointing=gpu,
        dataloader_num_workers=0,
        use_vllm=settings.use_vllm,
        vllm_mode="colocate",
        vllm_gpu_memory_utilization=settings.vllm_gpu_memory_utilization,
    )


def last_checkpoint(out_dir: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    ckpt = out_dir / CHECKPOINTS
    return get_last_checkpoint(str(ckpt)) if ckpt.is_dir() else None


def run_grpo(
    settings: TrainSettings,
    rows: list[TaskRow],
    out_dir: Path,
    factory: TaskEnvFactory,
    *,
    model: Any,
    tokenizer: Any,
    base_model: str,
    init_adapter: str | None = None,
) -> TrainResult:
    """Train ``model`` (a PEFT model) on ``rows``; the adapter is saved under ``out_dir/adapter``."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is experimental in TRL 1.16
    from trl import GRPOTrainer

    started = time.perf_counter()
    resume = last_checkpoint(out_dir)
    if settings.bare_json_tool_calls:
        tokenizer = read_bare_json_calls(tokenizer, factory.tool_names)
    trainer = GRPOTrainer(
        model=model,
        args=grpo_config(settings, out_dir, len(rows)),
        train_dataset=as_dataset(rows),
        processing_class=tokenizer,
        environment_factory=factory,
        callbacks=[step_callback(out_dir / STEPS)],
    )
    with factory:
        trainer.train(resume_from_checkpoint=resume)
    adapter = out_dir / ADAPTER
    trainer.model.save_pretrained(str(adapter))
    tokenizer.save_pretrained(str(adapter))
    return TrainResult(
        kind="trl-grpo", base_model=base_model, adapter_dir=str(adapter), init_adapter=init_adapter,
        steps=int(trainer.state.global_step), examples=len(rows), log=read_steps(out_dir / STEPS),
        wall_sec=time.perf_counter() - started, peak_rss_mb=peak_rss_mb(), gpu_peak_mb=gpu_peak_mb(),
        resumed_from=resume,
    )  # fmt: skip
