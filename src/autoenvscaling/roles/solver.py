"""The solver role: the shared agent loop working on a task inside the task's own sandbox.

``SolverAgent`` plugs into ``verify.trial.TrialRunner`` exactly like the oracle and nop agents do, so a solver
attempt gets the same fresh sandbox, Harbor reward semantics and ``result.json`` as a validation trial.
"""

from __future__ import annotations

import time
from pathlib import Path

from autoenvscaling.agent.actions import Action
from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.agent.loop import Agent
from autoenvscaling.agent.trajectory import TrajectoryRecorder
from autoenvscaling.llm.base import Model
from autoenvscaling.sandbox.base import ExecResult, Sandbox
from autoenvscaling.tasks import Task
from autoenvscaling.verify.results import AgentContext, AgentInfo, ModelInfo


class _TimedAgent(Agent):
    """Counts the seconds spent inside the task's own commands (the rest is model time and plumbing)."""

    command_sec = 0.0

    def execute(self, action: Action) -> ExecResult:
        started = time.perf_counter()
        try:
            return super().execute(action)
        finally:
            self.command_sec += time.perf_counter() - started


class SolverAgent:
    """A ``TrialAgent`` that runs the terminal agent loop with ``model``."""

    def __init__(self, model: Model, config: AgentConfig | None = None) -> None:
        self.model = model
        self.config = config or AgentConfig()

    @property
    def info(self) -> AgentInfo:
        return AgentInfo(
            name=self.config.agent_name,
            version="1",
            model_info=ModelInfo(name=self.model.name, provider=self.model.provider),
        )

    def setup(self, sandbox: Sandbox, task: Task) -> None:
        return None

    def run(self, sandbox: Sandbox, task: Task, agent_dir: Path, timeout_sec: float | None) -> AgentContext:
        config = self.config
        if timeout_sec is not None:
            wall = timeout_sec if config.max_wall_sec is None else min(config.max_wall_sec, timeout_sec)
            config = config.model_copy(update={"max_wall_sec": wall})
        recorder = TrajectoryRecorder(agent_dir / "trajectory.json")
        agent = _TimedAgent(self.model, sandbox, config, recorder)
        result = agent.run(task.instruction, outputs=task.config.artifact_paths or None)
        usage = result.usage
        return AgentContext(
            n_input_tokens=usage.prompt_tokens,
            n_cache_tokens=usage.cached_tokens,
            n_output_tokens=usage.completion_tokens,
            cost_usd=usage.cost_usd,
            metadata={
                "exit_reason": result.exit_reason,
                "turns": result.turns,
                "format_errors": result.format_errors,
                "wall_sec": result.wall_sec,
                "command_sec": agent.command_sec,
            },
        )
