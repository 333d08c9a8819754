"""A solver factory that travels: built from configs, it opens its model on the process that calls it.

``SolveRun`` on a remote executor (Ray) pickles its agent factory into every task. A factory that closes over an
open model cannot travel (its HTTP client holds locks); this one carries the model's config and opens the model
once per worker process. The embedded model is refused: it is served on the driver's machine, and a llama.cpp
server per Ray worker would be neither wanted nor reachable; serve it once and name it (``--base-url``).
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.base import Model
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


@dataclass(frozen=True)
class RemoteSolverFactory:
    model: ModelConfig
    loop: AgentConfig

    def __post_init__(self) -> None:
        if self.model.provider == "embedded":
            raise UserInputError(
                "--executor ray cannot run the embedded model on the workers: serve a model once "
                "(vLLM, llama.cpp server) and pass --model NAME --base-url URL"
            )

    def __call__(self) -> SolverAgent:
        return SolverAgent(_model(self.model), self.loop)
