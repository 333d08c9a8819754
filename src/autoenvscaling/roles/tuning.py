"""How the project tunes a model for a role: one policy, used alike by the CLI, the flywheel and the benchmarks.

A small local model (the embedded llama.cpp server) proposes in the staged mode: the harness holds the plan
and every call is short. A capable endpoint gets the free workshop. The embedded server is sized for the mode:
a workshop episode's growing history needs a long context, a staged call needs little; sampling is warm enough
that fresh samples differ (best-of-N and repairs rely on it); CPU requests get a long timeout (a retry would
start a slow prompt over).
"""

from __future__ import annotations

from typing import Literal

from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.roles.proposer.records import MODES, Mode

ModeChoice = Mode | Literal["auto"]
MODE_CHOICES: tuple[str, ...] = ("auto", *MODES)
WORKSHOP_CTX = 32768  # an agentic episode's history (files read, check reports)
STAGED_CTX = 8192  # one staged call: system prompt + one stage's inputs + the reply
CPU_TIMEOUT_SEC = 3600.0
_MAX_TOKENS: dict[str, int] = {"agentic": 2048, "prompt": 4096, "staged": 1024, "prompt-recorded": 1024}
_TEMPERATURE = 0.7


def is_small_local(model: ModelConfig) -> bool:
    """A model run on this machine: the embedded GGUF (1.5B or 0.5B) or a trained ``hf:`` checkpoint of it.
    The staged proposer's audience."""
    return model.provider in ("embedded", "hf")


def resolve_mode(mode: str, model: ModelConfig) -> Mode:
    """``auto``: staged for a small local model, the free workshop for any other."""
    if mode == "auto":
        return "staged" if is_small_local(model) else "agentic"
    if mode not in MODES:
        raise ValueError(f"unknown proposer mode {mode!r}; expected one of {', '.join(MODE_CHOICES)}")
    return mode


def tune_proposer(
    model: ModelConfig,
    mode: Mode,
    *,
    concurrency: int = 1,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> ModelConfig:
    """``model`` with the server size, token cap, temperature and timeout ``mode`` needs (explicit values win)."""
    update: dict[str, object] = {
        "max_tokens": max_tokens or _MAX_TOKENS[mode],
        "temperature": temperature if temperature is not None else (model.temperature or _TEMPERATURE),
    }
    if model.provider == "embedded":
        ctx = WORKSHOP_CTX if mode == "agentic" else STAGED_CTX if mode in ("staged", "prompt-recorded") else 0
        update |= {
            "embedded_parallel": max(model.embedded_parallel, concurrency),
            "embedded_ctx": max(model.embedded_ctx, ctx),
            "timeout_sec": max(model.timeout_sec, CPU_TIMEOUT_SEC),
        }
    return model.model_copy(update=update)


def tune_solver(model: ModelConfig, *, concurrency: int = 1, temperature: float | None = None) -> ModelConfig:
    """The solver's model: a CPU server gets one slot per concurrent attempt and a long timeout; an explicit
    ``temperature`` replaces the configured one."""
    if temperature is not None:
        model = model.model_copy(update={"temperature": temperature})
    if model.provider != "embedded":
        return model
    return model.model_copy(
        update={
            "embedded_parallel": max(model.embedded_parallel, concurrency),
            "timeout_sec": max(model.timeout_sec, CPU_TIMEOUT_SEC),
        }
    )


def tune_roles(
    proposer: ModelConfig,
    mode: Mode,
    *,
    solver: ModelConfig | None = None,
    propose_concurrency: int = 1,
    solve_concurrency: int = 1,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> tuple[ModelConfig, ModelConfig]:
    """The proposer's model tuned for ``mode`` and the solver's tuned as a solver (``solver`` defaults to the
    proposer's model), on one server when one embedded model plays both roles. The blind solver that reproduces
    recorded expectations is the solver, so it gets the solver's settings, never the proposer's sampling or cap.
    ``max_tokens``/``temperature`` are the proposer's."""
    tuned_proposer = tune_proposer(
        proposer, mode, concurrency=propose_concurrency, max_tokens=max_tokens, temperature=temperature
    )
    tuned_solver = tune_solver(solver or proposer, concurrency=solve_concurrency)
    solver_cfg, proposer_cfg = share_server(tuned_solver, tuned_proposer)
    return proposer_cfg, solver_cfg


def share_server(solver: ModelConfig, proposer: ModelConfig) -> tuple[ModelConfig, ModelConfig]:
    """When one embedded model plays both roles, both configs get one server shape (one copy of the weights)."""
    same = (solver.provider, solver.embedded_size, solver.embedded_path) == (
        proposer.provider,
        proposer.embedded_size,
        proposer.embedded_path,
    )
    if solver.provider != "embedded" or not same:
        return solver, proposer
    shape = {
        "embedded_parallel": max(solver.embedded_parallel, proposer.embedded_parallel),
        "embedded_ctx": max(solver.embedded_ctx, proposer.embedded_ctx),
    }
    return solver.model_copy(update=shape), proposer.model_copy(update=shape)
