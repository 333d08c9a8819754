"""Loading a policy for training or serving: base weights (GGUF, HF dir, or the tiny test model) plus LoRA.

GGUF files load through transformers' GGUF reader (the ``gguf`` package), which dequantizes the Q4_K_M weights
to the chosen dtype: the embedded 0.5B becomes a normal fp32 ``Qwen2ForCausalLM`` on the CPU, offline.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoenvscaling.errors import UserInputError

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from autoenvscaling.train.settings import TrainSettings

TINY = "tiny"


def resolve_base(spec: str) -> str:
    """``embedded[:SIZE]`` -> its installed GGUF path; a path is checked; ``tiny`` stays."""
    value = spec.strip()
    if value == TINY:
        return value
    if value == "embedded" or value.startswith("embedded:"):
        from autoenvscaling.llm.embedded import model_path
        from autoenvscaling.llm.embedded_specs import DEFAULT_SIZE

        size = value.partition(":")[2] or DEFAULT_SIZE
        return str(model_path(size))
    path = Path(value).expanduser()
    if not value or not path.exists():
        raise UserInputError(f"train base model {spec!r}: expected embedded[:SIZE], a .gguf file, a model dir or tiny")
    if path.is_file() and path.suffix != ".gguf":
        raise UserInputError(f"train base model {spec!r}: a file must be a .gguf")
    return str(path.resolve())


def torch_dtype(name: str) -> Any:
    import torch

    if name == "auto":
        return torch.bfloat16 if torch.cuda.is_available() else torch.float32
    return getattr(torch, name)


def load_base(base: str, dtype: str = "auto") -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Model and tokenizer for ``base`` (a resolved spec), without touching the network."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if base == TINY:
        from autoenvscaling.train.tiny import tiny_model

        return tiny_model()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(base)
    kwargs: dict[str, Any] = {"dtype": torch_dtype(dtype)}
    if path.suffix == ".gguf":
        from transformers import GgufConfig

        tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
        # Dense weights to train on: dequantized at load, and no longer marked as a quantized model (the Trainer
        # refuses to train a model that carries a GGUF quantizer, even one whose weights are already dense).
        kwargs["quantization_config"] = GgufConfig(gguf_file=path.name, dequantize=True)
        model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, **kwargs)
        quantizer = getattr(model, "hf_quantizer", None)
        if quantizer is not None:
            quantizer.remove_quantization_config(model)
    else:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def with_lora(model: PreTrainedModel, settings: TrainSettings, adapter: str | None = None) -> Any:
    """A trainable PEFT model: a fresh LoRA, or ``adapter`` (an earlier round's) to keep training."""
    from peft import LoraConfig, PeftModel, get_peft_model

    if adapter:
        return PeftModel.from_pretrained(model, adapter, is_trainable=True)
    targets: Any = settings.lora_target_modules
    if targets == ["all-linear"]:
        targets = "all-linear"
    config = LoraConfig(
        r=settings.lora_r,
        lora_alpha=settings.lora_alpha,
        lora_dropout=settings.lora_dropout,
        target_modules=targets,
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, config)
