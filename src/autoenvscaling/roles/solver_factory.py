"""How every caller builds the agents of its attempts: one decision shared by ``autoenv solve``/``eval``, the
flywheel's solve, calibrate and evaluate stages, and the benchmarks.

An oracle or nop agent needs nothing. A solver needs its model: on this machine the model is opened once for the
block and every attempt shares it; on a remote executor (Ray) the factory carries the model's config instead,
and each worker opens the model itself (``RemoteSolverFactory``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from autoenvscaling.agent.config import AgentConfig, guarded_solver
from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.config import ModelConfig, parse_model_arg
from autoenvscaling.llm.factory import open_model
from autoenvscaling.roles.remote_solver import RemoteSolverFactory
from autoenvscaling.roles.solver import SolverAgent
from autoenvscaling.roles.tuning import is_small_local, tune_solver
from autoenvscaling.verify.trial_agents import NopAgent, OracleAgent, TrialAgent

GUARDS = ("auto", "on", "off")


@contextlib.contextmanager
def solver_agents(
    model: ModelConfig, loop: AgentConfig, *, remote: bool
) -> Iterator[tuple[Callable[[], TrialAgent], str]]:
    """A factory of solver agents on ``model`` (already tuned) with ``loop``, and the model's name.

    Local: the model is open while the block runs (a scripted model restarts its script each block).
    Remote: nothing is opened here; the factory pickles and each worker opens its own model.
    """
    if remote:
        yield RemoteSolverFactory(model, loop), model.name or model.provider
        return
    with open_model(model) as opened:
        yield (lambda: SolverAgent(opened, loop)), opened.name


@contextlib.contextmanager
def trial_agents(
    agent: str,
    model: str,
    loop: Mapping[str, object],
    *,
    base_url: str | None = None,
    concurrency: int = 1,
    temperature: float | None = None,
    guards: str = "auto",
    remote: bool = False,
) -> Iterator[tuple[Callable[[], TrialAgent], dict[str, Any]]]:
    """The agents of a solve or eval run (``llm``, ``oracle`` or ``nop``) and the resolved config that records them.

    ``llm``: ``model`` is a ``--model`` value, tuned for the solver role (an explicit ``temperature`` wins);
    ``loop`` holds the agent loop's settings; ``guards`` (auto, on, off) puts the flywheel solver's small-model
    guards under them (auto: for a small local model, ``tuning.is_small_local``). The oracle and nop agents read
    none of these."""
    if agent == "oracle":
        yield OracleAgent, {"agent": "oracle"}
        return
    if agent == "nop":
        yield NopAgent, {"agent": "nop"}
        return
    if agent != "llm":
        raise UserInputError(f"--agent {agent!r}: expected llm, oracle or nop")
    if guards not in GUARDS:
        raise UserInputError(f"--guards {guards!r}: expected {', '.join(GUARDS)}")
    tuned = tune_solver(parse_model_arg(model, base_url=base_url), concurrency=concurrency, temperature=temperature)
    guarded = guards == "on" or (guards == "auto" and is_small_local(tuned))
    base = guarded_solver(AgentConfig().max_turns).model_dump() if guarded else {}
    config = AgentConfig.model_validate(base | dict(loop))
    resolved: dict[str, Any] = {
        "agent": "llm",
        "model": tuned.model_dump(mode="json", exclude_none=True),
        "loop": config.model_dump(mode="json"),
    }
    with solver_agents(tuned, config, remote=remote) as (factory, _name):
        yield factory, resolved
