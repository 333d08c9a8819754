"""ATIF trajectories (Harbor's ``agent/trajectory.json``): the models, a crash-safe recorder, and a reader.

The models follow Harbor's ATIF v1.8 pydantic models field by field (``extra="forbid"`` everywhere, sequential
``step_id`` from 1, agent-only fields only on agent steps, observation results pointing at tool calls of their
own step), so files written here validate in Harbor and Harbor's files read here. Older versions read too.

Layout of a run written by the agent loop::

    step 1  source=system  the system prompt
    step 2  source=user    the task prompt
    step 3+ source=agent   one model reply each: message, reasoning, tool_calls, and the observation the model
                           got back for them (``observation.results[].source_call_id`` -> ``tool_calls[]``)
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from autoenvscaling.agent.errors import TrajectoryError
from autoenvscaling.execution.rundir import write_atomic
from autoenvscaling.llm.base import ModelResponse

SCHEMA_VERSION = "ATIF-v1.8"
SchemaVersion = Literal[
    "ATIF-v1.0", "ATIF-v1.1", "ATIF-v1.2", "ATIF-v1.3", "ATIF-v1.4",
    "ATIF-v1.5", "ATIF-v1.6", "ATIF-v1.7", "ATIF-v1.8",
]  # fmt: skip
_AGENT_ONLY_FIELDS = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


class _Atif(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MediaSource(_Atif):
    """An image or audio file referenced by a multimodal content part (read support only)."""

    media_type: str
    path: str
    duration_sec: float | None = Field(default=None, ge=0)


class ContentPart(_Atif):
    type: Literal["text", "image", "audio"]
    text: str | None = None
    source: MediaSource | None = None

    @model_validator(mode="after")
    def _fields_match_type(self) -> Self:
        if (self.type == "text") != (self.text is not None) or (self.type == "text") == (self.source is not None):
            raise ValueError(f"content part of type {self.type!r} needs exactly 'text' (text) or 'source' (media)")
        return self


class AgentInfo(_Atif):
    name: str
    version: str
    model_name: str | None = None
    tool_definitions: list[dict[str, Any]] | None = None  # OpenAI function-calling schemas
    extra: dict[str, Any] | None = None


class ToolCall(_Atif):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]
    extra: dict[str, Any] | None = None


class SubagentTrajectoryRef(_Atif):
    trajectory_id: str | None = None
    session_id: str | None = None
    trajectory_path: str | None = None
    extra: dict[str, Any] | None = None


class ObservationResult(_Atif):
    source_call_id: str | None = None  # None: feedback not tied to a tool call (e.g. a format error)
    content: str | list[ContentPart] | None = None
    subagent_trajectory_ref: list[SubagentTrajectoryRef] | None = None
    extra: dict[str, Any] | None = None


class Observation(_Atif):
    results: list[ObservationResult]


class Metrics(_Atif):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    extra: dict[str, Any] | None = None


class FinalMetrics(_Atif):
    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] | None = None


class Step(_Atif):
    step_id: int = Field(ge=1)
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    message: str | list[ContentPart]
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    is_copied_context: bool | None = None
    llm_call_count: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] | None = None

    @field_validator("timestamp")
    @classmethod
    def _iso_timestamp(cls, v: str | None) -> str | None:
        if v is not None:
            datetime.fromisoformat(v.replace("Z", "+00:00"))  # ValueError -> validation error
        return v

    @model_validator(mode="after")
    def _agent_only_fields(self) -> Self:
        if self.source != "agent":
            for name in _AGENT_ONLY_FIELDS:
                if getattr(self, name) is not None:
                    raise ValueError(f"field {name!r} is only allowed on agent steps, not {self.source!r}")
        no_llm = self.source == "agent" and self.llm_call_count == 0
        if no_llm and (self.metrics is not None or self.reasoning_content is not None):
            raise ValueError("an agent step with llm_call_count 0 must not carry metrics or reasoning")
        return self


class Trajectory(_Atif):
    schema_version: SchemaVersion = "ATIF-v1.8"  # what we write; every earlier version reads
    session_id: str | None = None
    trajectory_id: str | None = None
    agent: AgentInfo
    steps: list[Step] = Field(min_length=1)
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    continued_trajectory_ref: str | None = None
    extra: dict[str, Any] | None = None
    subagent_trajectories: list[Trajectory] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        for i, step in enumerate(self.steps):
            if step.step_id != i + 1:
                raise ValueError(f"steps[{i}].step_id is {step.step_id}, expected {i + 1} (sequential from 1)")
            call_ids = [c.tool_call_id for c in step.tool_calls or []]
            if len(set(call_ids)) != len(call_ids):
                raise ValueError(f"step {step.step_id} has duplicate tool_call_ids")
            for result in step.observation.results if step.observation else []:
                if result.source_call_id is not None and result.source_call_id not in call_ids:
                    unknown = result.source_call_id
                    raise ValueError(f"step {step.step_id}: observation refers to unknown tool call {unknown!r}")
        sub_ids = [t.trajectory_id for t in self.subagent_trajectories or []]
        if None in sub_ids or len(set(sub_ids)) != len(sub_ids):
            raise ValueError("embedded subagent trajectories need unique trajectory_ids")
        return self


def metrics_from_response(response: ModelResponse) -> Metrics:
    """Per-step metrics of one model reply (token ids and logprobs only when the server returned them)."""
    u = response.usage
    return Metrics(
        prompt_tokens=u.prompt_tokens,
        completion_tokens=u.completion_tokens,
        cached_tokens=u.cached_tokens,
        cost_usd=u.cost_usd,
        prompt_token_ids=response.prompt_token_ids,
        completion_token_ids=response.completion_token_ids,
        logprobs=response.logprobs,
        extra={"latency_sec": round(u.latency_sec, 6)},
    )


def _now() -> str:
    return datetime.now(UTC).isoformat()


class TrajectoryRecorder:
    """Appends steps and rewrites ``path`` atomically after each one, so a crash keeps everything so far.

    ``path=None`` keeps the trajectory in memory only. The agent description is set by the agent loop
    (``set_agent``) unless given here.
    """

    def __init__(self, path: Path | None = None, *, session_id: str | None = None, agent: AgentInfo | None = None):
        self.path = path
        self.session_id = session_id or uuid.uuid4().hex
        self.agent = agent
        self.steps: list[Step] = []
        self.extra: dict[str, Any] = {}
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)

    def set_agent(self, agent: AgentInfo) -> None:
        self.agent = agent

    def add_step(
        self,
        source: Literal["system", "user", "agent"],
        message: str,
        *,
        model_name: str | None = None,
        reasoning_content: str | None = None,
        tool_calls: list[ToolCall] | None = None,
        observation: Observation | None = None,
        metrics: Metrics | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Step:
        step = Step(
            step_id=len(self.steps) + 1,
            timestamp=_now(),
            source=source,
            message=message,
            model_name=model_name,
            reasoning_content=reasoning_content,
            tool_calls=tool_calls or None,
            observation=observation,
            metrics=metrics,
            extra=extra or None,
        )
        self.steps.append(step)
        self.write()
        return step

    def final_metrics(self) -> FinalMetrics:
        ms = [s.metrics for s in self.steps if s.metrics is not None]
        return FinalMetrics(
            total_prompt_tokens=sum(m.prompt_tokens or 0 for m in ms),
            total_completion_tokens=sum(m.completion_tokens or 0 for m in ms),
            total_cached_tokens=sum(m.cached_tokens or 0 for m in ms),
            total_cost_usd=sum(m.cost_usd or 0.0 for m in ms),
            total_steps=len(self.steps),
        )

    def trajectory(self) -> Trajectory:
        if self.agent is None:
            raise TrajectoryError("trajectory has no agent description (call set_agent first)")
        return Trajectory(
            session_id=self.session_id,
            agent=self.agent,
            steps=self.steps,
            final_metrics=self.final_metrics(),
            extra=self.extra or None,
        )

    def finish(self, **extra: Any) -> Trajectory:
        """Record run-level facts (exit reason, wall time...) in ``extra`` and write the final file."""
        self.extra.update(extra)
        return self.write(durable=True)

    def write(self, *, durable: bool = False) -> Trajectory:
        """Rewrite the file atomically (readers never see half of it); only the final write is fsynced, since a
        crashed trial is redone from scratch anyway."""
        trajectory = self.trajectory()
        if self.path is not None:
            write_atomic(self.path, trajectory.model_dump_json(exclude_none=True, indent=2), durable=durable)
        return trajectory


def read_trajectory(path: Path) -> Trajectory:
    """Load and validate an ATIF file; any problem is one ``TrajectoryError`` line naming the file."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise TrajectoryError(f"{path}: cannot read trajectory: {e.strerror or e}") from None
    try:
        return Trajectory.model_validate_json(raw)
    except ValidationError as e:
        errors = e.errors()
        first = errors[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        kind = "not valid JSON" if first["type"] == "json_invalid" else "not a valid ATIF trajectory"
        raise TrajectoryError(f"{path}: {kind}: {where}: {first['msg']}{more}") from None


def update_trajectory_extra(path: Path, **extra: Any) -> Trajectory:
    """Merge run-level facts into a finished trajectory's ``extra`` (e.g. a reward known only later) and rewrite
    the file atomically. Writing the same facts again leaves the file as it was."""
    trajectory = read_trajectory(path)
    trajectory.extra = {**(trajectory.extra or {}), **extra}
    write_atomic(path, trajectory.model_dump_json(exclude_none=True, indent=2))
    return trajectory
