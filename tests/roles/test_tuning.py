"""The model-tuning policy: which proposer mode a model gets and how its server is shaped."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.roles.tuning import STAGED_CTX, WORKSHOP_CTX, resolve_mode, share_server, tune_proposer


def test_auto_gives_local_models_the_staged_proposer_and_endpoints_the_workshop() -> None:
    assert resolve_mode("auto", ModelConfig(provider="embedded")) == "staged"
    assert resolve_mode("auto", ModelConfig(provider="hf", hf_path=Path("/ckpt"))) == "staged"  # a trained adapter
    assert resolve_mode("auto", ModelConfig(provider="openai", name="Qwen/Qwen3-32B")) == "agentic"
    assert resolve_mode("prompt", ModelConfig(provider="embedded")) == "prompt"
    with pytest.raises(ValueError, match="unknown proposer mode"):
        resolve_mode("freestyle", ModelConfig(provider="embedded"))


def test_the_embedded_server_is_sized_for_the_mode_and_shared_by_both_roles() -> None:
    staged = tune_proposer(ModelConfig(provider="embedded"), "staged", concurrency=2)
    workshop = tune_proposer(ModelConfig(provider="embedded"), "agentic")
    assert (staged.embedded_ctx, staged.embedded_parallel, staged.max_tokens) == (
        max(STAGED_CTX, ModelConfig().embedded_ctx),
        2,
        1024,
    )
    assert workshop.embedded_ctx == max(WORKSHOP_CTX, ModelConfig().embedded_ctx)
    assert tune_proposer(ModelConfig(provider="embedded"), "staged", max_tokens=77).max_tokens == 77
    solver, proposer = share_server(ModelConfig(provider="embedded"), workshop)
    assert (solver.embedded_ctx, solver.embedded_parallel) == (proposer.embedded_ctx, proposer.embedded_parallel)
