"""Rewards with several keys (reward.json): every key is kept, and one documented scalar is used where one number
is needed (validator checks, solve pass rates, calibration)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoenvscaling.flywheel.solving import solve_tasks
from autoenvscaling.pool.calibration import calibration_from_rewards
from autoenvscaling.roles.solve_run import SolveRun
from autoenvscaling.sandbox.fake import FakeBackend, FakeCall, FakeSandbox
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.results import scalar_reward
from autoenvscaling.verify.trial_agents import NopAgent, OracleAgent


@pytest.mark.parametrize(
    ("rewards", "scalar"),
    [
        ({"reward": 1.0}, 1.0),
        ({"reward": 0.2, "style": 1.0}, 0.2),  # the "reward" key wins
        ({"correct": 0.5}, 0.5),  # the only key
        ({"correct": 1.0, "style": 0.5}, 0.75),  # else the mean of all keys
        ({}, None),
    ],
)
def test_scalar_reward(rewards: dict[str, float], scalar: float | None) -> None:
    assert scalar_reward(rewards) == scalar


def _task(root: Path) -> Path:
    files = {
        "task.toml": 'schema_version = "1.4"\n[environment]\nworkdir = "/app"\n',
        "instruction.md": "Do it.\n",
        "environment/Dockerfile": "FROM autoenv/base:bookworm\nWORKDIR /app\n",
        "solution/solve.sh": "#!/bin/bash\n",
        "tests/test.sh": "#!/bin/bash\n# writes /logs/verifier/reward.json\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _backend(oracle: dict[str, float], nop: dict[str, float]) -> FakeBackend:
    """The oracle's run scores ``oracle``, a run without it ``nop``."""

    def test(sb: FakeSandbox, call: FakeCall) -> None:
        rewards = oracle if sb.is_file("/app/solved") else nop
        sb.write_file("/logs/verifier/reward.json", json.dumps(rewards))

    backend = FakeBackend()
    backend.register(r"/solution/solve\.sh", lambda sb, call: sb.write_file("/app/solved", ""))
    backend.register(r"/tests/test\.sh", test)
    return backend


def test_solve_keeps_every_key_and_scores_the_scalar(tmp_path: Path) -> None:
    task = _task(tmp_path / "t")
    backend = _backend({"correct": 1.0, "style": 0.5}, {"correct": 0.0, "style": 1.0})
    records, (summary,) = SolveRun(tmp_path / "oracle", backend, OracleAgent, attempts=2).run([task])
    assert [(r.rewards, r.reward, r.solved) for r in records] == [({"correct": 1.0, "style": 0.5}, 0.75, False)] * 2
    assert summary.mean_rewards == {"correct": 1.0, "style": 0.5}
    assert summary.pass_at_1 == 0.0 and summary.mean_reward == 0.75

    backend = _backend({"reward": 1.0, "style": 0.0}, {"reward": 0.0})
    records, (summary,) = SolveRun(tmp_path / "oracle2", backend, OracleAgent, attempts=1).run([task])
    assert records[0].solved and summary.pass_at_1 == 1.0
    assert summary.mean_rewards == {"reward": 1.0, "style": 0.0}


def test_calibration_uses_the_scalar(tmp_path: Path) -> None:
    task = _task(tmp_path / "t")
    backend = _backend({"correct": 1.0, "style": 1.0}, {"correct": 1.0, "style": 0.0})
    (oracle,) = solve_tasks(tmp_path / "a", [("e", task)], backend=backend, agent_factory=OracleAgent, attempts=2)
    (nop,) = solve_tasks(tmp_path / "b", [("e", task)], backend=backend, agent_factory=NopAgent, attempts=2)
    cal = calibration_from_rewards(oracle.rewards + nop.rewards)
    assert cal is not None and (cal.attempts, cal.passes) == (4, 2)  # all keys 1 only with the solution


def test_validation_records_every_key(tmp_path: Path) -> None:
    task = _task(tmp_path / "t")
    backend = _backend({"correct": 1.0, "style": 1.0}, {"correct": 0.0, "style": 0.0})
    (rep,), _ = ValidationRun(tmp_path / "run", backend, ValidationConfig(repeats=1, check_leakage=False)).run([task])
    assert rep.verdict.value == "valid", rep.checks
    assert [(t.agent, t.reward, t.rewards) for t in rep.trials] == [
        ("oracle", 1.0, {"correct": 1.0, "style": 1.0}),
        ("nop", 0.0, {"correct": 0.0, "style": 0.0}),
    ]
