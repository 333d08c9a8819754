"""ATIF trajectories: Harbor's schema rules, golden files, the recorder's crash safety, the reader's errors.

Golden files are regenerated only with ``AUTOENV_UPDATE_GOLDEN=1``; otherwise a difference fails the test.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from atif_rules import harbor_rule_violations

from autoenvscaling.agent import Agent, AgentConfig, TrajectoryRecorder, read_trajectory
from autoenvscaling.agent.errors import TrajectoryError
from autoenvscaling.agent.trajectory import AgentInfo
from autoenvscaling.llm.base import ModelResponse, ToolCall, Usage
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.sandbox.base import Sandbox

GOLDEN = Path(__file__).parent / "golden"


def bash(cmd: str) -> str:
    return f"Running it.\n```bash\n{cmd}\n```"


SCENARIOS: dict[str, tuple[str, list[Any]]] = {
    "bash_block": (
        "bash_block",
        ["Let me think.", bash("printf 'hi\\n' > out.txt && cat out.txt") + "\nsubmit", bash("pwd"), "submit"],
    ),
    "tool_calls": (
        "tool_calls",
        [
            ModelResponse(
                content="Writing the file.",
                reasoning_content="The task wants out.txt.",
                tool_calls=[ToolCall(id="call_a", name="bash", arguments={"command": "echo hi > out.txt"})],
                usage=Usage(prompt_tokens=120, completion_tokens=20, cached_tokens=100, cost_usd=0.0002),
                prompt_token_ids=[1, 2, 3],
                completion_token_ids=[4, 5],
                logprobs=[-0.1, -0.2],
            ),
            '<tool_call>\n{"name": "bash", "arguments": {"command": "cat out.txt; exit 2"}}\n</tool_call>',
            ModelResponse(tool_calls=[ToolCall(id="call_b", name="submit")]),
        ],
    ),
    "json": (
        "json",
        [
            json.dumps({"thought": "write", "action": "bash", "command": "echo hi > out.txt"}),
            "not json at all",
            json.dumps({"thought": "check", "action": "submit", "command": "cat out.txt"}),
            json.dumps({"thought": "done", "action": "submit", "command": ""}),
        ],
    ),
}


def run_scenario(name: str, sandbox: Sandbox, path: Path) -> dict[str, Any]:
    fmt, replies = SCENARIOS[name]
    agent = Agent(ScriptedModel(replies), sandbox, AgentConfig(action_format=fmt), TrajectoryRecorder(path))
    assert agent.run("Write hi to out.txt.").exit_reason == "submitted"
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


VOLATILE = {"timestamp": "<timestamp>", "session_id": "<session>", "version": "<version>"}
VOLATILE_NUMBERS = {"duration_sec", "latency_sec", "wall_sec"}


def normalize(obj: Any) -> Any:
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            if k in VOLATILE and isinstance(v, str):
                out[k] = VOLATILE[k]
            elif k in VOLATILE_NUMBERS:
                out[k] = 0
            else:
                out[k] = normalize(v)
        return out
    if isinstance(obj, list):
        return [normalize(v) for v in obj]
    return obj


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_golden_trajectory(name: str, sandbox: Sandbox, tmp_path: Path) -> None:
    doc = normalize(run_scenario(name, sandbox, tmp_path / "trajectory.json"))
    golden = GOLDEN / f"{name}.json"
    if os.environ.get("AUTOENV_UPDATE_GOLDEN") == "1":
        golden.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert golden.exists(), f"{golden} missing: run with AUTOENV_UPDATE_GOLDEN=1 to create it"
    assert doc == json.loads(golden.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_written_trajectory_follows_harbor_rules(name: str, sandbox: Sandbox, tmp_path: Path) -> None:
    doc = run_scenario(name, sandbox, tmp_path / "trajectory.json")
    assert harbor_rule_violations(doc) == []


def test_rule_checker_catches_violations() -> None:
    """The checker above must be able to fail."""
    doc = {
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "a", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "x", "metrics": {"prompt_tokens": 1}},
            {
                "step_id": 3,
                "source": "agent",
                "message": "y",
                "observation": {"results": [{"source_call_id": "nope"}]},
            },
        ],
    }
    found = harbor_rule_violations(doc)
    assert any("agent-only" in v for v in found)
    assert any("not sequential" in v for v in found)
    assert any("no tool call" in v for v in found)


def test_token_ids_logprobs_and_cost_reach_the_step_metrics(sandbox: Sandbox, tmp_path: Path) -> None:
    doc = run_scenario("tool_calls", sandbox, tmp_path / "t.json")
    metrics = doc["steps"][2]["metrics"]
    assert metrics["prompt_token_ids"] == [1, 2, 3] and metrics["logprobs"] == [-0.1, -0.2]
    assert metrics["cached_tokens"] == 100 and metrics["cost_usd"] == 0.0002
    assert doc["steps"][2]["reasoning_content"] == "The task wants out.txt."
    assert doc["final_metrics"]["total_cost_usd"] == pytest.approx(0.0002)


def test_recorder_writes_after_every_step_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "trajectory.json"
    rec = TrajectoryRecorder(path, agent=AgentInfo(name="t", version="0"))
    for i in range(3):
        rec.add_step("user", f"message {i}")
        assert len(read_trajectory(path).steps) == i + 1
    assert sorted(p.name for p in path.parent.iterdir()) == ["trajectory.json"]


def write(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "trajectory.json"
    path.write_text(content)
    return path


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        (
            '{"schema_version": "ATIF-v1.8", "steps": [{"step_id": 1, "source": "user", "message": "m"}]}',
            "agent",
        ),
        (
            '{"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"},'
            ' "steps": [{"step_id": 2, "source": "user", "message": "m"}]}',
            "expected 1",
        ),
        (
            '{"schema_version": "ATIF-v9", "agent": {"name": "a", "version": "1"}, "steps": []}',
            "schema_version",
        ),
    ],
)
def test_read_trajectory_errors_are_one_line(tmp_path: Path, content: str, message: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(TrajectoryError) as info:
        read_trajectory(path)
    text = str(info.value)
    assert "\n" not in text and str(path) in text and message in text


def test_read_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TrajectoryError, match="cannot read"):
        read_trajectory(tmp_path / "nope.json")


def test_reads_older_versions_and_multimodal_content(tmp_path: Path) -> None:
    doc = {
        "schema_version": "ATIF-v1.6",
        "session_id": "s",
        "agent": {"name": "terminus-2", "version": "2.0", "model_name": "m"},
        "steps": [
            {"step_id": 1, "source": "user", "message": [{"type": "text", "text": "look"}]},
            {
                "step_id": 2,
                "source": "agent",
                "message": "ok",
                "tool_calls": [{"tool_call_id": "t", "function_name": "bash_command", "arguments": {}}],
                "observation": {
                    "results": [
                        {
                            "source_call_id": "t",
                            "content": [{"type": "image", "source": {"media_type": "image/png", "path": "a.png"}}],
                        }
                    ]
                },
            },
        ],
    }
    traj = read_trajectory(write(tmp_path, json.dumps(doc)))
    assert traj.schema_version == "ATIF-v1.6" and len(traj.steps) == 2
