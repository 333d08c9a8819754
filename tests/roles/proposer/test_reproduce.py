"""Blind reproduction's attempt accounting: an attempt without a reward (an infrastructure failure) is run again
and never counts as a failure to reproduce."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from autoenvscaling.roles.proposer import reproduce as mod
from autoenvscaling.verify.results import ExceptionInfo


class _Runner:
    """Stands in for TrialRunner: hands out the scripted rewards in order and records the trial dirs."""

    def __init__(self, rewards: list[float | None]) -> None:
        self.rewards = list(rewards)
        self.dirs: list[str] = []
        self.closed = False

    def run(self, task, agent, trial_dir: Path, **_kw):
        self.dirs.append(trial_dir.name)
        reward = self.rewards.pop(0)
        exc = (
            ExceptionInfo(exception_type="TrialWatchdogTimeout", exception_message="no reward")
            if reward is None
            else None
        )
        return SimpleNamespace(reward=reward, exception_info=exc, agent_result=None)

    def close(self) -> None:
        self.closed = True


def _run(monkeypatch, tmp_path: Path, rewards: list[float | None], attempts: int = 3):
    runner = _Runner(rewards)
    monkeypatch.setattr(mod, "load_task", lambda _d: SimpleNamespace())
    monkeypatch.setattr(mod, "TrialRunner", lambda *a, **k: runner)
    out = mod.reproduce(
        tmp_path / "cand", lambda: object(), backend=None, trials_dir=tmp_path, attempts=attempts, builder=object()
    )
    return out, runner


def test_an_attempt_without_reward_is_run_again(monkeypatch, tmp_path):
    out, runner = _run(monkeypatch, tmp_path, [None, 0.0, 0.0, 0.0])
    assert out.rewards == [None, 0.0, 0.0, 0.0]  # three rewarded attempts behind the verdict
    assert not out.reproduced and out.error is None
    assert runner.dirs == ["cand__blind-1", "cand__blind-2", "cand__blind-3", "cand__blind-4"]
    assert runner.closed


def test_a_rerun_can_reproduce(monkeypatch, tmp_path):
    out, _ = _run(monkeypatch, tmp_path, [0.0, None, 0.0, 1.0])
    assert out.reproduced and out.rewards == [0.0, None, 0.0, 1.0] and out.error is None


def test_stops_at_first_success(monkeypatch, tmp_path):
    out, runner = _run(monkeypatch, tmp_path, [1.0, 0.0, 0.0])
    assert out.reproduced and len(runner.dirs) == 1


@pytest.mark.parametrize("attempts", [1, 3])
def test_only_errors_is_an_error_after_bounded_reruns(monkeypatch, tmp_path, attempts):
    out, runner = _run(monkeypatch, tmp_path, [None] * 10, attempts=attempts)
    assert len(runner.dirs) == attempts  # reruns are capped at `attempts` in all
    assert not out.reproduced
    assert out.error is not None and "TrialWatchdogTimeout" in out.error


def test_too_few_rewarded_attempts_is_an_error_not_a_rejection(monkeypatch, tmp_path):
    out, runner = _run(monkeypatch, tmp_path, [0.0, None, None, None, 0.0])
    assert len(runner.dirs) == 4  # one rewarded, then three errors: the cap
    assert not out.reproduced  # one rewarded attempt of three: no verdict, an error
    assert out.error is not None and out.error.startswith("only 1 of 3 blind attempts got a reward")
