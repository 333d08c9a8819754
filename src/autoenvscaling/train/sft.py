"""Rejection-sampling fine-tuning: TRL's ``SFTTrainer`` on a round's successful solver trajectories (``sft.jsonl``).

Examples are tokenized here with the model's chat template in its training form (TRL's prefix-preserving
variant with generation marks), so the loss covers only the assistant turns: the tool calls and replies the
solver wrote, never the instructions or the command outputs it read.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from autoenvscaling.errors import UserInputError
from autoenvscaling.export.chat import SftExample
from autoenvscaling.train.progress import (
    ADAPTER,
    STEPS,
    TrainResult,
    gpu_peak_mb,
    peak_rss_mb,
    read_steps,
    step_callback,
)
from autoenvscaling.train.settings import TrainSettings


def read_sft(path: Path) -> list[SftExample]:
    if not path.is_file():
        raise UserInputError(f"{path}: no such file (the export stage writes sft.jsonl)")
    examples: list[SftExample] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                examples.append(SftExample.model_validate_json(line))
            except ValidationError as e:
                raise UserInputError(f"{path}:{n}: not an SFT example: {e.errors()[0]['msg']}") from None
    return examples


def template_messages(example: SftExample) -> list[dict[str, Any]]:
    """The example as chat-template input: tool-call arguments as objects (HF templates JSON-encode them)."""
    out: list[dict[str, Any]] = []
    for m in example.messages:
        msg: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            msg["tool_calls"] = [
                {"type": "function", "function": {"name": c.function.name, "arguments": _args(c.function.arguments)}}
                for c in m.tool_calls
            ]
        out.append(msg)
    return out


def _args(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {"raw": text}
    return value if isinstance(value, dict) else {"value": value}


def tokenize_examples(examples: list[SftExample], tokenizer: Any, max_length: int) -> list[dict[str, list[int]]]:
    """``input_ids`` and ``assistant_masks`` per example (1 on the tokens the solver wrote)."""
    from trl.chat_template_utils import get_training_chat_template

    template = get_training_chat_template(tokenizer) or tokenizer.chat_template
    rows = []
    for ex in examples:
        enc = tokenizer.apply_chat_template(
            template_messages(ex), tools=ex.tools or None, chat_template=template, tokenize=True,
            return_dict=True, return_assistant_tokens_mask=True,
        )  # fmt: skip
        ids, mask = list(enc["input_ids"])[:max_length], list(enc["assistant_masks"])[:max_length]
        if any(mask):
            rows.append({"input_ids": ids, "assistant_masks": mask})
    return rows


def run_sft(
    settings: TrainSettings,
    sft_path: Path,
    out_dir: Path,
    *,
    model: Any,
    tokenizer: Any,
    base_model: str,
    init_adapter: str | None = None,
) -> TrainResult:
    """Fine-tune ``model`` (a PEFT model) on the examples in ``sft_path``; the adapter goes to ``out_dir/adapter``."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from autoenvscaling.train.grpo import last_checkpoint

    started = time.perf_counter()
    rows = tokenize_examples(read_sft(sft_path), tokenizer, settings.sft_max_length)
    if not rows:
        raise UserInputError(f"{sft_path}: no example with an assistant turn to learn from")
    gpu = torch.cuda.is_available()
    args = SFTConfig(
        output_dir=str(out_dir / "checkpoints"), num_train_epochs=settings.sft_epochs, max_steps=settings.steps,
        per_device_train_batch_size=settings.batch_size, learning_rate=settings.learning_rate, seed=settings.seed,
        logging_steps=1, save_strategy="steps", save_steps=1, save_total_limit=1, report_to="none",
        use_cpu=not gpu, bf16=gpu and settings.dtype != "float32", max_length=settings.sft_max_length,
        dataloader_num_workers=0,  # pre-tokenized: TRL masks the labels with the assistant_masks column
    )  # fmt: skip
    resume = last_checkpoint(out_dir)
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                         callbacks=[step_callback(out_dir / STEPS)])  # fmt: skip
    trainer.train(resume_from_checkpoint=resume)
    adapter = out_dir / ADAPTER
    trainer.model.save_pretrained(str(adapter))
    tokenizer.save_pretrained(str(adapter))
    return TrainResult(
        kind="sft", base_model=base_model, adapter_dir=str(adapter), init_adapter=init_adapter,
        steps=int(trainer.state.global_step), examples=len(rows), log=read_steps(out_dir / STEPS),
        wall_sec=time.perf_counter() - started, peak_rss_mb=peak_rss_mb(), gpu_peak_mb=gpu_peak_mb(),
        resumed_from=resume,
    )  # fmt: skip
