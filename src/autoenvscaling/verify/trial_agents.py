"""What runs in the agent phase of a trial. Oracle and nop are the validation primitives; the LLM solver
(roles/solver.py) implements the same protocol."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from autoenvscaling.sandbox.base import Sandbox
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.paths import CONTAINER_LOGS_AGENT, CONTAINER_SOLUTION_DIR
from autoenvscaling.verify.errors import AgentTimeoutError
from autoenvscaling.verify.results import AgentContext, AgentInfo
from autoenvscaling.verify.secrets import expand_env


class TrialAgent(Protocol):
    @property
    def info(self) -> AgentInfo: ...

    def setup(self, sandbox: Sandbox, task: Task) -> None: ...

    def run(self, sandbox: Sandbox, task: Task, agent_dir: Path, timeout_sec: float | None) -> AgentContext:
        """Work in ``sandbox``; write logs under ``agent_dir`` (host). Raise AgentTimeoutError past the limit."""
        ...


class NopAgent:
    """Does nothing: a valid task must score 0 after it."""

    info = AgentInfo(name="nop", version="1")

    def setup(self, sandbox: Sandbox, task: Task) -> None:
        return None

    def run(self, sandbox: Sandbox, task: Task, agent_dir: Path, timeout_sec: float | None) -> AgentContext:
        return AgentContext()


class OracleAgent:
    """Runs ``solution/solve.sh`` (uploaded to /solution only now); output goes to /logs/agent/oracle.txt."""

    info = AgentInfo(name="oracle", version="1")

    def __init__(self, passed_env: Mapping[str, str] | None = None) -> None:
        self.passed_env = dict(passed_env or {})  # the only host variables ${VAR} in [solution.env] may use

    def setup(self, sandbox: Sandbox, task: Task) -> None:
        if not task.paths.solve_script.is_file():
            raise FileNotFoundError(f"{task.paths.solve_script}: missing")
        sandbox.upload(task.paths.solution_dir, CONTAINER_SOLUTION_DIR)

    def run(self, sandbox: Sandbox, task: Task, agent_dir: Path, timeout_sec: float | None) -> AgentContext:
        result = sandbox.exec(
            f"mkdir -p {CONTAINER_LOGS_AGENT} && "
            f"bash {CONTAINER_SOLUTION_DIR}/solve.sh > {CONTAINER_LOGS_AGENT}/oracle.txt 2>&1",
            timeout=timeout_sec,
            env=expand_env(task.config.solution.env, self.passed_env),
        )
        if result.timed_out:
            raise AgentTimeoutError(f"solution/solve.sh ran past the agent timeout ({timeout_sec:g} s)")
        return AgentContext(metadata={"exit_code": result.exit_code, "command_sec": result.duration_sec})
