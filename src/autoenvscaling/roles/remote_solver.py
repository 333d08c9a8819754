"""A solver factory and a model that travel: built from configs, they open the model on the process that uses it.

``SolveRun`` on a remote executor (Ray) pickles its agent factory into every task, and ``ValidationRun`` its
model probes (the judge, the adversarial solver). A factory that closes over an open model cannot travel (its
HTTP client holds locks); ``RemoteSolverFactory`` and ``RemoteModel`` carry the model's config and open the
model once per worker process. The embedded model is refused: it is served on the driver's machine, and a
llama.cpp server per Ray worker would be neither wanted nor reachable; serve it once and name it (``--base-url``).
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any

from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.base import Message, Model, ModelResponse, Sampling, ToolSpec
from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.llm.factory import open_model
from autoenvscaling.roles.solver import SolverAgent

_opened: dict[str, Model] = {}
_stack = contextlib.ExitStack()  # models stay open for the worker process's life
_lock = threading.Lock()


def _model(config: ModelConfig) -> Model:
    key = config.model_dump_json()
    with _lock:
        if key not in _opened:
            _opened[key] = _stack.enter_context(open_model(config))
        return _opened[key]


def _refuse_embedded(config: ModelConfig) -> None:
    if config.provider == "embedded":
        raise UserInputError(
            "--executor ray cannot run the embedded model on the workers: serve a model once "
            "(vLLM, llama.cpp server) and pass --model NAME --base-url URL"
        )


@dataclass(frozen=True)
class RemoteSolverFactory:
    model: ModelConfig
    loop: AgentConfig

    def __post_init__(self) -> None:
        _refuse_embedded(self.model)

    def __call__(self) -> SolverAgent:
        return SolverAgent(_model(self.model), self.loop)


@dataclass(frozen=True)
class RemoteModel:
    """A ``Model`` that pickles: it holds the config, and each process that calls it opens the model once."""

    config: ModelConfig

    def __post_init__(self) -> None:
        _refuse_embedded(self.config)

    @property
    def name(self) -> str:
        return _model(self.config).name

    @property
    def provider(self) -> str:
        return self.config.provider

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: Sampling | None = None,
    ) -> ModelResponse:
        return _model(self.config).complete(messages, tools=tools, response_format=response_format, sampling=sampling)
