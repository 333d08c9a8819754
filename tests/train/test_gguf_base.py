"""The embedded model's GGUF file as a training base: loaded offline into dense fp32 weights that the Trainer
accepts (a model still carrying transformers' GGUF quantizer is refused as "quantized with GGUF")."""

from __future__ import annotations

import pytest

pytest.importorskip("trl")
pytestmark = [
    pytest.mark.embedded_model,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::FutureWarning:(transformers|peft|trl)"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:(transformers|peft|trl|torch)"),
]


def test_the_embedded_gguf_loads_as_a_trainable_dense_model() -> None:
    import torch
    from transformers.trainer_utils import validate_quantization_for_training

    from autoenvscaling.train.models import load_base, resolve_base, with_lora
    from autoenvscaling.train.settings import TrainSettings

    model, tokenizer = load_base(resolve_base("embedded:0.5b"), "float32")
    assert getattr(model, "hf_quantizer", None) is None and not getattr(model, "is_quantized", False)
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    assert sum(p.numel() for p in model.parameters()) > 400_000_000 and tokenizer.pad_token is not None
    validate_quantization_for_training(with_lora(model, TrainSettings(lora_r=4)))  # raises for a quantized base
