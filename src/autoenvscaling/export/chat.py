"""ATIF trajectories as OpenAI chat messages with structured tool calls: the SFT format TRL and most
trainers read (``{"messages": [...], "tools": [...]}`` per line).

Every agent step becomes an assistant message whose ``tool_calls`` are the step's calls (for text action
formats, the parsed ``bash``/``submit`` action the loop recorded), followed by one ``tool`` message per
observation tied to a call, or a ``user`` message for feedback tied to none (a format error).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from autoenvscaling.agent.actions import BASH_TOOL, SUBMIT_TOOL
from autoenvscaling.agent.trajectory import ContentPart, Step, Trajectory, read_trajectory


class ChatFunction(BaseModel):
    name: str
    arguments: str  # JSON text, as the OpenAI API sends it


class ChatToolCall(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: ChatFunction


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: list[ChatToolCall] | None = None
    tool_call_id: str | None = None
    reasoning_content: str | None = None


class SftExample(BaseModel):
    """One line of ``sft.jsonl``."""

    messages: list[ChatMessage]
    tools: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def to_json_line(self) -> str:
        return self.model_dump_json(exclude_none=True) + "\n"


def _text(content: str | list[ContentPart] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(p.text for p in content if p.text is not None)


def _agent_messages(step: Step) -> list[ChatMessage]:
    calls = [
        ChatToolCall(id=c.tool_call_id, function=ChatFunction(name=c.function_name, arguments=json.dumps(c.arguments)))
        for c in step.tool_calls or []
    ]
    out = [
        ChatMessage(
            role="assistant",
            content=_text(step.message),
            tool_calls=calls or None,
            reasoning_content=step.reasoning_content,
        )
    ]
    ids = {c.id for c in calls}
    for result in step.observation.results if step.observation else []:
        if result.source_call_id is not None and result.source_call_id in ids:
            out.append(ChatMessage(role="tool", tool_call_id=result.source_call_id, content=_text(result.content)))
        else:
            out.append(ChatMessage(role="user", content=_text(result.content)))
    return out


def trajectory_messages(trajectory: Trajectory) -> list[ChatMessage]:
    messages: list[ChatMessage] = []
    for step in trajectory.steps:
        if step.source == "agent":
            messages += _agent_messages(step)
        else:
            messages.append(ChatMessage(role=step.source, content=_text(step.message)))
    return messages


def trajectory_tools(trajectory: Trajectory) -> list[dict[str, Any]]:
    """The tools the calls refer to: the agent's own definitions, else bash and submit."""
    if trajectory.agent.tool_definitions:
        return list(trajectory.agent.tool_definitions)
    return [{"type": "function", "function": t.model_dump()} for t in (BASH_TOOL, SUBMIT_TOOL)]


def sft_example(path: Path, **metadata: Any) -> SftExample:
    trajectory = read_trajectory(path)
    return SftExample(messages=trajectory_messages(trajectory), tools=trajectory_tools(trajectory), metadata=metadata)
