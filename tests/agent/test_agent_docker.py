"""The agent loop against a real container (autoenv/terminal:latest): real processes, real timeouts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from atif_rules import harbor_rule_violations

from autoenvscaling.agent import Agent, AgentConfig, TrajectoryRecorder
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.sandbox.base import Sandbox, SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def container() -> Iterator[Sandbox]:
    spec = SandboxSpec(image="autoenv/terminal:latest", name_hint="agent-test", network=False)
    backend = DockerBackend()
    try:
        with backend.create(spec) as sb:
            yield sb
    finally:
        backend.client.close()


def bash(cmd: str) -> str:
    return f"Next.\n```bash\n{cmd}\n```"


def test_solves_a_task_in_a_container(container: Sandbox, tmp_path: Path) -> None:
    replies = [
        bash("mkdir -p /tmp/work && cat > /tmp/work/greet.sh <<'EOF'\necho \"hello $1\"\nEOF"),
        bash("bash /tmp/work/greet.sh world | tee /tmp/work/out.txt"),
        "submit",
    ]
    path = tmp_path / "trajectory.json"
    agent = Agent(ScriptedModel(replies), container, AgentConfig(), TrajectoryRecorder(path))
    assert agent.run("Make greet.sh and run it.").exit_reason == "submitted"
    assert container.exec("cat /tmp/work/out.txt").stdout == "hello world\n"
    doc = json.loads(path.read_text())
    assert harbor_rule_violations(doc) == []
    assert "hello world" in doc["steps"][3]["observation"]["results"][0]["content"]


def test_timeout_kills_the_command_and_the_next_one_runs(container: Sandbox) -> None:
    model = ScriptedModel([bash("sleep 30; echo never"), bash("echo alive"), "submit"])
    agent = Agent(model, container, AgentConfig(command_timeout_sec=1))
    assert agent.run("task").exit_reason == "submitted"
    timed_out, after = model.calls[1][-1].content, model.calls[2][-1].content
    assert "timed out after 1.0 seconds" in timed_out and "never" not in timed_out
    assert after.startswith("Exit code: 0") and "alive" in after


def test_wall_budget_caps_a_long_command(container: Sandbox) -> None:
    model = ScriptedModel(responder=lambda _: bash("sleep 60"))
    agent = Agent(model, container, AgentConfig(max_wall_sec=2, command_timeout_sec=120))
    result = agent.run("task")
    assert (result.exit_reason, result.turns) == ("max_wall", 1)
    observation = agent.recorder.steps[-1].observation
    assert observation is not None and observation.results[0].extra is not None
    assert observation.results[0].extra["timed_out"] is True


def test_preview_shows_the_first_lines_of_the_files_the_task_names(container: Sandbox) -> None:
    container.exec("mkdir -p /tmp/pv && seq 1 9 > /tmp/pv/in.txt && printf 'a b\\n' > '/tmp/pv/two.txt'")
    task = "Sum the numbers in /tmp/pv/in.txt and /tmp/pv/two.txt, write it to /tmp/pv/out.txt. See /etc/."
    model = ScriptedModel(["submit", "submit"])
    Agent(model, container, AgentConfig(preview_inputs=1, min_commands_before_submit=0)).run(task)
    first = model.calls[0][1].content
    assert "exist already; they start like this:\n$ head -n 5 /tmp/pv/in.txt\n1\n2\n3\n4\n5" in first
    assert "two.txt\n" not in first and "out.txt\n" not in first  # over the limit; not there yet
    model = ScriptedModel(["submit"])
    Agent(model, container, AgentConfig(min_commands_before_submit=0)).run(task)
    assert "start like this" not in model.calls[0][1].content  # off by default
