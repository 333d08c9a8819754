"""The real embedded 0.5B model drives the agent loop for a few turns on a trivial task (CPU, greedy).

What is checked is the plumbing: its commands ran in the sandbox and a valid ATIF trajectory was written.
Whether it solved the task is not asserted: that is the model's business, measured in docs/benchmarks.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.agent.trajectory import read_trajectory
from autoenvscaling.llm.config import parse_model_arg
from autoenvscaling.llm.factory import open_model
from autoenvscaling.roles.solve_run import SolveRun
from autoenvscaling.roles.solver import SolverAgent
from autoenvscaling.sandbox.registry import get_backend

pytestmark = [pytest.mark.embedded_model, pytest.mark.docker, pytest.mark.slow]


def _trivial_task(root: Path) -> Path:
    task = root / "hello-file"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    (task / "task.toml").write_text('schema_version = "1.4"\n[agent]\ntimeout_sec = 300\n')
    (task / "instruction.md").write_text("Create the file /app/hello.txt containing the single line: hello\n")
    (task / "environment" / "Dockerfile").write_text("FROM autoenv/terminal:latest\nWORKDIR /app\n")
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho hello > /app/hello.txt\n")
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        'if [ "$(cat /app/hello.txt 2>/dev/null)" = hello ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n'
    )
    return task


def test_embedded_model_drives_the_loop(tmp_path: Path) -> None:
    task = _trivial_task(tmp_path)
    config = parse_model_arg("embedded:0.5b").model_copy(update={"temperature": 0.0, "max_tokens": 256})
    with open_model(config) as model:
        agent_cfg = AgentConfig(max_turns=4, command_timeout_sec=30)
        run = SolveRun(tmp_path / "run", get_backend("docker"), lambda: SolverAgent(model, agent_cfg))
        (rec,), _ = run.run([task])
    assert rec.error is None, rec.error
    assert rec.reward in (0.0, 1.0)
    trial = Path(rec.trial_dir)
    traj = read_trajectory(trial / "agent" / "trajectory.json")
    agent_steps = [s for s in traj.steps if s.source == "agent"]
    assert agent_steps, "the model was never called"
    executed = [
        r for s in agent_steps if s.observation for r in s.observation.results if r.extra and "exit_code" in r.extra
    ]
    assert executed, "no command of the model ran in the sandbox"
    assert traj.final_metrics is not None and (traj.final_metrics.total_prompt_tokens or 0) > 0
    result = json.loads((trial / "result.json").read_text())
    assert result["agent_result"]["n_input_tokens"] > 0
