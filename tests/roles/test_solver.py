"""The solver role end to end on Docker: scripted model -> agent loop -> task sandbox -> Harbor verifier."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.agent.trajectory import read_trajectory
from autoenvscaling.llm.scripted import ScriptedError, ScriptedModel
from autoenvscaling.roles.solve_run import SolveRun, pass_at_k
from autoenvscaling.roles.solver import SolverAgent
from autoenvscaling.sandbox.registry import get_backend

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LOG_TASK = EXAMPLES / "terminal" / "log-error-summary"


def _bash(cmd: str) -> str:
    return f"Running it.\n```bash\n{cmd}\n```"


def test_pass_at_k() -> None:
    assert pass_at_k(4, 0, 1) == 0.0
    assert pass_at_k(4, 4, 2) == 1.0
    assert pass_at_k(4, 2, 1) == pytest.approx(0.5)
    assert pass_at_k(4, 1, 4) == 1.0
    assert pass_at_k(3, 1, 2) == pytest.approx(1 - 1 / 3)


@pytest.mark.docker
def test_scripted_solver_solves_and_is_recorded(tmp_path: Path) -> None:
    solution = (LOG_TASK / "solution" / "solve.sh").read_text()
    model = ScriptedModel([_bash(solution), _bash("cat /app/report.txt"), "Done.\n```bash\nsubmit\n```"])
    run = SolveRun(tmp_path / "run", get_backend("docker"), lambda: SolverAgent(model, AgentConfig(max_turns=5)))
    records, summaries = run.run([LOG_TASK])
    (rec,) = records
    assert rec.reward == 1.0 and rec.error is None
    assert rec.exit_reason == "submitted" and rec.turns == 3
    trial = Path(rec.trial_dir)
    result = json.loads((trial / "result.json").read_text())
    assert result["verifier_result"]["rewards"] == {"reward": 1.0}
    for phase in ("environment_setup", "agent_setup", "agent_execution", "verifier"):
        assert result[phase]["started_at"] and result[phase]["finished_at"]
    traj = read_trajectory(trial / "agent" / "trajectory.json")
    commands = [c.arguments.get("command") for s in traj.steps for c in (s.tool_calls or [])]
    assert solution.strip() in [c.strip() for c in commands if c]
    assert summaries[0].pass_at_1 == 1.0
    assert (tmp_path / "run" / "summary.json").is_file()


@pytest.mark.docker
def test_wrong_answer_is_reward_zero_and_model_failure_is_an_error(tmp_path: Path) -> None:
    wrong = ScriptedModel([_bash("echo 'total 1' > /app/report.txt"), "```bash\nsubmit\n```"])
    broken = ScriptedModel([_bash("ls /app"), ScriptedError("endpoint returned 503 five times")])
    agents = iter([SolverAgent(wrong), SolverAgent(broken)])
    run = SolveRun(tmp_path / "run", get_backend("docker"), lambda: next(agents), attempts=2)
    records, (summary,) = run.run([LOG_TASK])
    first, second = sorted(records, key=lambda r: r.attempt)
    assert first.reward == 0.0 and first.error is None  # a task failure is a reward
    assert second.reward is None and "503" in (second.error or "")  # an infrastructure failure is an error
    assert summary.errors == 1 and summary.attempts == 2 and summary.pass_at_1 == 0.0
    # The failed attempt still left its trajectory on disk.
    traj = read_trajectory(Path(second.trial_dir) / "agent" / "trajectory.json")
    assert traj.extra and traj.extra.get("exit_reason") == "error"


@pytest.mark.docker
def test_resume_skips_finished_attempts(tmp_path: Path) -> None:
    calls: list[int] = []

    def factory() -> SolverAgent:
        calls.append(1)
        return SolverAgent(ScriptedModel(["```bash\nsubmit\n```"]))

    run_dir = tmp_path / "run"
    SolveRun(run_dir, get_backend("docker"), factory, attempts=1).run([LOG_TASK])
    records, _ = SolveRun(run_dir, get_backend("docker"), factory, attempts=2).run([LOG_TASK], resume=True)
    assert len(calls) == 2  # attempt 1 was not redone
    assert sorted(r.attempt for r in records) == [1, 2]
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == 2
