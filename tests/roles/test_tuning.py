"""The model-tuning policy: which proposer mode a model gets and how its server is shaped."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.roles.tuning import (
    STAGED_CTX,
    WORKSHOP_CTX,
    resolve_mode,
    share_server,
    tune_proposer,
    tune_roles,
)


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


def test_the_blind_solver_gets_the_solvers_sampling_on_the_proposers_server() -> None:
    base = ModelConfig(provider="embedded")
    proposer, solver = tune_roles(base, "agentic", propose_concurrency=2, temperature=0.9, max_tokens=3000)
    assert (proposer.temperature, proposer.max_tokens) == (0.9, 3000)
    # The solver keeps its own configured sampling and cap: none of the proposer's.
    assert (solver.temperature, solver.max_tokens) == (base.temperature, base.max_tokens)
    shape = ("embedded_ctx", "embedded_parallel", "embedded_size", "embedded_path")
    assert [getattr(solver, k) for k in shape] == [getattr(proposer, k) for k in shape]  # one copy of the weights
    assert proposer.embedded_ctx == max(WORKSHOP_CTX, base.embedded_ctx) and proposer.embedded_parallel == 2
    # A separate solver model keeps its own server.
    other = ModelConfig(provider="embedded", embedded_size="0.5b", temperature=0.2)
    _, solo = tune_roles(base, "staged", solver=other, solve_concurrency=3)
    assert (solo.embedded_size, solo.temperature, solo.embedded_parallel) == ("0.5b", 0.2, 3)
