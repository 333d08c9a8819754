"""One real staged episode with the embedded 0.5B model, end to end on Docker (CPU, greedy, capped budgets).

What is checked is the plumbing: every stage call went to the real model under its token cap, the harness ran
what the model wrote in the draft's image, and the episode ended with a candidate or a named reason. Whether the
environment is good is the model's business, measured in docs/benchmarks.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoenvscaling.agent.trajectory import read_trajectory
from autoenvscaling.llm.config import parse_model_arg
from autoenvscaling.llm.factory import open_model
from autoenvscaling.roles.proposer.domain import domain_context
from autoenvscaling.roles.proposer.run import ProposeConfig, ProposeRun
from autoenvscaling.roles.tuning import tune_proposer
from autoenvscaling.sandbox.registry import get_backend

pytestmark = [pytest.mark.embedded_model, pytest.mark.docker, pytest.mark.slow]


def test_a_real_staged_episode_runs_end_to_end(tmp_path: Path) -> None:
    base = parse_model_arg("embedded:0.5b")
    config = tune_proposer(base, "staged", temperature=0.0)
    staged = {"max_calls": 6, "solution_samples": 1, "max_repairs": 0}
    propose = ProposeConfig.model_validate(
        {"mode": "staged", "n": 1, "reproduce_attempts": 1, "solver": {"max_turns": 2}, "proposer": {"staged": staged}}
    )
    with open_model(config) as model:
        run = ProposeRun(tmp_path / "out", get_backend("docker"), model, domain_context("terminal"), propose)
        (record,) = run.run()
    assert record.generation.error is None, record.generation.error
    assert record.generation.turns >= 2 and record.generation.completion_tokens > 0
    episode = Path(record.episode_dir)
    traj = read_trajectory(episode / "trajectory.json")
    stages = [(s.extra or {}).get("stage") for s in traj.steps if s.source == "agent"]
    assert stages[0] == "idea" and len(stages) == record.generation.turns
    assert all(
        s.metrics is not None and (s.metrics.completion_tokens or 0) <= 400 for s in traj.steps if s.source == "agent"
    )
    log = json.loads((episode / "staged.json").read_text())
    if record.candidate_dir is None:
        assert record.failed_checks, record  # a rejected episode names its reason
    else:
        assert log["recorded"] and record.validation.verdict is not None
        v = record.validation
        assert v.reproduce_oneshots or v.reproduce_rewards  # the blind solver ran (one-shot, or its loop)
