"""Our tasks in Harbor's other layouts (examples/harbor-kinds/), through the real validator and solve run on Docker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoenvscaling.roles.solve_run import SolveRun
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.validate.report import Verdict
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.trial_agents import NopAgent, OracleAgent

pytestmark = pytest.mark.docker

KINDS = Path(__file__).resolve().parents[2] / "examples" / "harbor-kinds"
MULTI_STEP = KINDS / "multi-step"
MULTI_REWARD = KINDS / "multi-reward"


def _steps(trial_dir: Path) -> list[tuple[str, float | None]]:
    result = json.loads((trial_dir / "result.json").read_text())
    return [
        (s["step_name"], (s["verifier_result"] or {}).get("rewards", {}).get("reward")) for s in result["step_results"]
    ]


def test_multi_step_oracle_passes_and_nop_fails(backend: DockerBackend, tmp_path: Path) -> None:
    run = ValidationRun(tmp_path / "run", backend, ValidationConfig(repeats=2))
    (rep,), _ = run.run([MULTI_STEP])
    assert rep.verdict == Verdict.VALID, (rep.failed_checks, rep.error, rep.checks)
    rewards = {t.trial_name: t.reward for t in rep.trials}
    assert rewards == {"multi-step__oracle-1": 1.0, "multi-step__oracle-2": 1.0, "multi-step__nop": 0.0}
    trials = tmp_path / "run" / "trials"
    assert _steps(trials / "multi-step__oracle-1") == [("import", 1.0), ("update", 1.0)]
    # Step "import" has min_reward = 1: after the nop scores 0 there, step "update" never runs.
    assert _steps(trials / "multi-step__nop") == [("import", 0.0)]
    assert (trials / "multi-step__oracle-1" / "steps" / "update" / "agent" / "oracle.txt").is_file()


def test_multi_step_solve_run(backend: DockerBackend, tmp_path: Path) -> None:
    records, (summary,) = SolveRun(tmp_path / "oracle", backend, OracleAgent, attempts=1).run([MULTI_STEP])
    assert [r.reward for r in records] == [1.0] and summary.pass_at_1 == 1.0
    records, (summary,) = SolveRun(tmp_path / "nop", backend, NopAgent, attempts=1).run([MULTI_STEP])
    assert [r.reward for r in records] == [0.0] and summary.pass_at_1 == 0.0


def test_multi_reward_with_healthcheck_and_collect_hook(backend: DockerBackend, tmp_path: Path) -> None:
    run = ValidationRun(tmp_path / "run", backend, ValidationConfig(repeats=1))
    (rep,), _ = run.run([MULTI_REWARD])
    assert rep.verdict == Verdict.VALID, (rep.failed_checks, rep.error, rep.checks)
    assert [(t.agent, t.rewards) for t in rep.trials] == [
        ("oracle", {"reward": 1.0, "prices": 1.0, "removed": 1.0}),
        ("nop", {"reward": 0.0, "prices": 0.0, "removed": 0.0}),
    ]
    # The separate verifier graded the hook's snapshot of the database, copied out as an artifact.
    snapshot = tmp_path / "run" / "trials" / "multi-reward__oracle-1" / "artifacts" / "logs" / "artifacts"
    assert json.loads((snapshot / "products.json").read_text()) == [
        {"name": "apple", "price": 3},
        {"name": "fig", "price": 7},
        {"name": "pear", "price": 5},
    ]
