"""ATIF trajectories to chat messages with structured tool calls (the SFT export)."""

from __future__ import annotations

import json
from pathlib import Path

from autoenvscaling.agent.trajectory import (
    AgentInfo,
    Observation,
    ObservationResult,
    ToolCall,
    TrajectoryRecorder,
    read_trajectory,
    update_trajectory_extra,
)
from autoenvscaling.export.chat import sft_example


def _trajectory(path: Path) -> Path:
    rec = TrajectoryRecorder(path, agent=AgentInfo(name="t", version="1"))
    rec.add_step("system", "You are in a terminal.")
    rec.add_step("user", "Sum the numbers.")
    rec.add_step(
        "agent",
        "Let me sum.\n```bash\nawk '{s+=$1} END {print s}' n.txt\n```",
        tool_calls=[ToolCall(tool_call_id="call_1", function_name="bash", arguments={"command": "awk ..."})],
        observation=Observation(results=[ObservationResult(source_call_id="call_1", content="Exit code: 0\n26")]),
    )
    rec.add_step("agent", "bad reply", observation=Observation(results=[ObservationResult(content="Use one block.")]))
    rec.add_step("agent", "submit", tool_calls=[ToolCall(tool_call_id="call_3", function_name="submit", arguments={})])
    rec.finish(exit_reason="submitted")
    return path


def test_messages_with_structured_tool_calls(tmp_path: Path) -> None:
    ex = sft_example(_trajectory(tmp_path / "trajectory.json"), task="sum", reward=1.0)
    roles = [m.role for m in ex.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user", "assistant"]
    call = ex.messages[2].tool_calls[0]  # type: ignore[index]
    assert (call.id, call.type, call.function.name) == ("call_1", "function", "bash")
    assert json.loads(call.function.arguments) == {"command": "awk ..."}
    assert ex.messages[3].tool_call_id == "call_1" and "26" in ex.messages[3].content
    assert [t["function"]["name"] for t in ex.tools] == ["bash", "submit"]
    line = json.loads(ex.to_json_line())
    assert line["metadata"] == {"task": "sum", "reward": 1.0} and "tool_call_id" not in line["messages"][0]


def test_update_trajectory_extra_merges_and_is_idempotent(tmp_path: Path) -> None:
    path = _trajectory(tmp_path / "trajectory.json")
    update_trajectory_extra(path, learnability_reward=0.75)
    first = path.read_bytes()
    update_trajectory_extra(path, learnability_reward=0.75)
    assert path.read_bytes() == first
    extra = read_trajectory(path).extra
    assert extra == {"exit_reason": "submitted", "learnability_reward": 0.75}
