"""Trial results in Harbor's ``result.json`` shape (field names line up with Harbor's TrialResult)."""

from __future__ import annotations

import traceback
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field


def utcnow() -> datetime:
    return datetime.now(UTC)


class TimingInfo(BaseModel):
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def seconds(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


class ExceptionInfo(BaseModel):
    exception_type: str
    exception_message: str
    exception_traceback: str = ""
    occurred_at: datetime = Field(default_factory=utcnow)

    @classmethod
    def from_exception(cls, e: BaseException) -> ExceptionInfo:
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        return cls(exception_type=type(e).__name__, exception_message=str(e), exception_traceback=tb)


class ModelInfo(BaseModel):
    name: str
    provider: str


class AgentInfo(BaseModel):
    name: str
    version: str = "1"
    model_info: ModelInfo | None = None


class AgentContext(BaseModel):
    """What the agent phase reports: token/cost totals and free-form metadata (turns, exit reason...)."""

    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


SOLVED_REWARD = 1.0 - 1e-9  # the one "solved" threshold: a reward of 1, float noise allowed


def is_solved(reward: float | None) -> bool:
    """A trial is solved when its scalar reward (``scalar_reward``) is 1; an unscored trial is not."""
    return reward is not None and reward >= SOLVED_REWARD


def scalar_reward(rewards: Mapping[str, float]) -> float | None:
    """One number for a trial whose tests wrote several (``reward.json``), wherever one number is needed: the
    validator's oracle and nop checks, solve pass rates and pass@k, calibration.

    The ``reward`` key when present (Harbor's one-dimensional convention: reward.txt is read as it, and a step's
    numeric ``min_reward`` gates it); else the only key's value; else the mean of all keys, each weighing the
    same. A trial is solved when this number is 1 (so with no ``reward`` key, every key must be 1)."""
    if not rewards:
        return None
    if "reward" in rewards:
        return rewards["reward"]
    values = list(rewards.values())
    return values[0] if len(values) == 1 else sum(values) / len(values)


class VerifierResult(BaseModel):
    rewards: dict[str, float] | None = None

    @property
    def reward(self) -> float | None:
        """The headline reward (``scalar_reward``); ``rewards`` keeps every key."""
        return scalar_reward(self.rewards) if self.rewards else None


class TaskId(BaseModel):
    path: str


class StepResult(BaseModel):
    """One step of a multi-step trial (Harbor's ``step_results`` entry; its logs are under ``steps/<name>/``)."""

    step_name: str
    agent_result: AgentContext | None = None
    verifier_result: VerifierResult | None = None
    exception_info: ExceptionInfo | None = None
    agent_setup: TimingInfo | None = None
    agent_execution: TimingInfo | None = None
    verifier: TimingInfo | None = None
    command_seconds: dict[str, float] = Field(default_factory=dict)


class TrialResult(BaseModel):
    id: uuid.UUID = Field(default_factory=uuid.uuid4)
    task_name: str
    trial_name: str
    trial_uri: str
    task_id: TaskId
    task_checksum: str
    agent_info: AgentInfo
    agent_result: AgentContext | None = None
    verifier_result: VerifierResult | None = None
    exception_info: ExceptionInfo | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    environment_setup: TimingInfo | None = None
    agent_setup: TimingInfo | None = None
    agent_execution: TimingInfo | None = None
    verifier: TimingInfo | None = None
    # Not in Harbor's model: container teardown, which we measure separately.
    teardown: TimingInfo | None = None
    # Seconds the task's own commands ran ("agent": solve.sh or the agent's commands, "tests": test.sh);
    # phase time minus these is the harness's overhead.
    command_seconds: dict[str, float] = Field(default_factory=dict)
    # Multi-step tasks: one entry per step that ran; the trial's verifier_result combines their rewards.
    step_results: list[StepResult] | None = None

    @property
    def reward(self) -> float | None:
        return self.verifier_result.reward if self.verifier_result else None

    @property
    def rewards(self) -> dict[str, float] | None:
        return self.verifier_result.rewards if self.verifier_result else None

    @property
    def agent_results(self) -> list[AgentContext]:
        """What the agent phase(s) reported: the trial's, or each step's (multi-step trials have no trial-level one)."""
        if self.agent_result is not None:
            return [self.agent_result]
        return [s.agent_result for s in self.step_results or [] if s.agent_result is not None]

    @property
    def is_error(self) -> bool:
        return self.exception_info is not None and self.verifier_result is None

    def phase_seconds(self) -> dict[str, float]:
        phases = {
            "environment_setup": self.environment_setup,
            "agent_setup": self.agent_setup,
            "agent_execution": self.agent_execution,
            "verifier": self.verifier,
            "teardown": self.teardown,
        }
        out = {k: s for k, v in phases.items() if v is not None and (s := v.seconds) is not None}
        for step in self.step_results or []:  # a multi-step trial's agent and verifier time is its steps'
            for name, timing in (
                ("agent_setup", step.agent_setup),
                ("agent_execution", step.agent_execution),
                ("verifier", step.verifier),
            ):
                if timing is not None and (sec := timing.seconds) is not None:
                    out[name] = out.get(name, 0.0) + sec
        return out
