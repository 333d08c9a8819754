"""A task using a Harbor feature we do not run is an error in validate, solve and calibration, never `invalid`.

Issue 14: a task with environment/docker-compose.yaml (and a Dockerfile for main) was run as one container, its
oracle scored 0, and the verdict was `invalid`. Such tasks run now (on Docker); one whose compose file asks for
something we do not grant (here extra capabilities) is refused. The fake sandbox would score every run 0, so a
verdict other than `error` would show the task being run."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.flywheel.solving import solve_tasks
from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.pool.calibration import calibration_from_rewards
from autoenvscaling.roles.solve_run import SolveRun
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.validate.report import Verdict
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.trial_agents import NopAgent, OracleAgent

COMPOSE = """\
services:
  main:
    depends_on:
      api:
        condition: service_healthy
  api:
    build: ./api
    cap_add: [NET_ADMIN]
    healthcheck:
      test: ["CMD", "test", "-f", "/ready"]
"""


def _compose_task(root: Path) -> Path:
    files = {
        "task.toml": 'schema_version = "1.4"\n[verifier]\ntimeout_sec = 30\n[agent]\ntimeout_sec = 30\n',
        "instruction.md": "Fetch http://api:8000/answer and write it to /app/answer.txt.\n",
        "environment/Dockerfile": f"FROM {BASE_IMAGE}\nWORKDIR /app\n",
        "environment/docker-compose.yaml": COMPOSE,
        "environment/api/Dockerfile": f"FROM {BASE_IMAGE}\nRUN echo 42 > /answer && touch /ready\n",
        "solution/solve.sh": "#!/bin/bash\ncurl -s http://api:8000/answer > /app/answer.txt\n",
        "tests/test.sh": "#!/bin/bash\ngrep -qx 42 /app/answer.txt && echo 1 > /logs/verifier/reward.txt"
        " || echo 0 > /logs/verifier/reward.txt\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _fake() -> FakeBackend:
    backend = FakeBackend()
    # Were the task run as one container, its tests would find no answer: reward 0.
    backend.register(r"/tests/test\.sh", lambda sb, call: sb.write_file("/logs/verifier/reward.txt", "0"))
    return backend


def test_validate_refuses_compose_as_error(tmp_path: Path) -> None:
    backend = _fake()
    task = _compose_task(tmp_path / "compose-task")
    run = ValidationRun(tmp_path / "run", backend, ValidationConfig(repeats=2, check_leakage=False))
    (rep,), summary = run.run([task])
    assert rep.verdict == Verdict.ERROR, (rep.failed_checks, rep.checks)
    assert rep.error is not None and "docker-compose.yaml: services.api.cap_add: extra capabilities" in rep.error
    assert "\n" not in rep.error
    assert rep.trials == [] and backend.sandboxes == [] and backend.builds == []
    assert summary.by_verdict == {"error": 1}


def test_solve_and_calibration_record_errors(tmp_path: Path) -> None:
    task = _compose_task(tmp_path / "compose-task")
    run = SolveRun(tmp_path / "solve", _fake(), OracleAgent, attempts=3)
    records, (summary,) = run.run([task])
    assert [r.reward for r in records] == [None, None, None]
    assert all(
        r.error and r.error.startswith("UnsupportedTaskError: ") and "docker-compose" in r.error for r in records
    )
    assert summary.errors == 3 and summary.pass_at_1 is None

    (attempts,) = solve_tasks(
        tmp_path / "calibrate", [("env1", task)], backend=_fake(), agent_factory=NopAgent, attempts=2
    )
    assert attempts.errors == 2
    assert calibration_from_rewards(attempts.rewards) is None  # not "never solved" (pass rate 0)


def test_agent_facing_feature_refused_for_solvers_only(tmp_path: Path) -> None:
    task = _compose_task(tmp_path / "mcp-task")
    (task / "environment" / "docker-compose.yaml").unlink()
    (task / "task.toml").write_text(
        (task / "task.toml").read_text() + '[[environment.mcp_servers]]\nname = "docs"\nurl = "http://d:1/sse"\n'
    )

    class _Solver(NopAgent):
        info = NopAgent.info.model_copy(update={"name": "llm-solver"})

    (oracle,), _ = SolveRun(tmp_path / "a", _fake(), OracleAgent).run([task])
    assert oracle.error is None and oracle.reward == 0.0
    (solver,), _ = SolveRun(tmp_path / "b", _fake(), _Solver).run([task])
    assert solver.reward is None and solver.error is not None and "MCP servers" in solver.error


@pytest.mark.docker
def test_validate_refuses_compose_on_docker(tmp_path: Path) -> None:
    backend = DockerBackend()
    if not backend.image_exists(BASE_IMAGE):
        pytest.fail(f"{BASE_IMAGE} is missing: run `autoenv images bootstrap`")
    run = ValidationRun(tmp_path / "run", backend, ValidationConfig(repeats=1))
    (rep,), _ = run.run([_compose_task(tmp_path / "compose-task")])
    assert rep.verdict == Verdict.ERROR and rep.error is not None and "services.api.cap_add" in rep.error
    assert rep.trials == []


def test_fake_backend_refuses_a_runnable_compose_task_as_error(tmp_path: Path) -> None:
    task = _compose_task(tmp_path / "compose-task")
    compose = task / "environment" / "docker-compose.yaml"
    compose.write_text(compose.read_text().replace("    cap_add: [NET_ADMIN]\n", ""))
    run = ValidationRun(tmp_path / "run", _fake(), ValidationConfig(repeats=1, check_leakage=False))
    (rep,), _ = run.run([task])
    assert rep.verdict == Verdict.ERROR, rep.checks
    assert rep.error is not None and "fake sandbox runs no multi-container tasks (services: api)" in rep.error
