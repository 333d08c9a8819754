"""Blind reproduction's attempt accounting: an attempt without a reward (an infrastructure failure) is run again
and never counts as a failure to reproduce."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from autoenvscaling.agent.config import guarded_solver, one_shot
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.proposer import reproduce as mod
from autoenvscaling.roles.solver import SolverAgent
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


def _solver() -> SolverAgent:
    return SolverAgent(ScriptedModel([]), guarded_solver(10))


def test_a_one_shot_attempt_comes_first_and_its_success_is_a_reproduction(monkeypatch, tmp_path):
    runner = _Runner([1.0])
    agents: list[object] = []
    real_run = runner.run
    runner.run = lambda task, agent, trial_dir, **kw: (agents.append(agent), real_run(task, agent, trial_dir))[1]
    monkeypatch.setattr(mod, "load_task", lambda _d: SimpleNamespace())
    monkeypatch.setattr(mod, "TrialRunner", lambda *a, **k: runner)
    out = mod.reproduce(tmp_path / "cand", _solver, None, tmp_path, attempts=3, builder=object(), one_shots=2)
    assert out.reproduced and out.oneshot_rewards == [1.0] and out.rewards == [] and out.error is None
    assert runner.dirs == ["cand__oneshot-1"]  # the first success ends the attempts
    (shot,) = agents
    assert isinstance(shot, SolverAgent) and shot.config.max_turns == 1
    assert shot.config.agent_name.endswith("-oneshot") and "oneshot_system.j2" in shot.config.templates["system.j2"]
    assert mod.reproduction_attempts(out) == "1 one-shot attempt(s)"
    # Failed (or unrewarded) one-shot attempts: the loop's K attempts follow, as without them.
    for first in (0.0, None):
        runner = _Runner([first, 0.0, 0.0, 0.0, 1.0])
        monkeypatch.setattr(mod, "TrialRunner", lambda *a, _r=runner, **k: _r)
        out = mod.reproduce(tmp_path / "cand", _solver, None, tmp_path, attempts=3, builder=object(), one_shots=2)
        assert out.reproduced and out.oneshot_rewards == [first, 0.0] and out.rewards == [0.0, 0.0, 1.0]
        assert runner.dirs == ["cand__oneshot-1", "cand__oneshot-2", "cand__blind-1", "cand__blind-2", "cand__blind-3"]
        assert mod.reproduction_attempts(out) == "2 one-shot, then 3 in the loop attempt(s)"
    # An agent without a model loop (the oracle) gets no one-shot attempt.
    runner = _Runner([0.0, 0.0, 0.0])
    monkeypatch.setattr(mod, "TrialRunner", lambda *a, **k: runner)
    out = mod.reproduce(tmp_path / "cand", object, None, tmp_path, attempts=3, builder=object(), one_shots=2)
    assert out.oneshot_rewards == [] and runner.dirs == ["cand__blind-1", "cand__blind-2", "cand__blind-3"]
    assert mod.reproduction_attempts(out) == "3 in the loop attempt(s)"


def test_the_one_shot_settings_keep_the_solvers_model_and_drop_the_loop_guards() -> None:
    loop = guarded_solver(10)
    shot = one_shot(loop)
    assert (shot.max_turns, shot.review_before_submit, shot.outputs_before_submit) == (1, False, 0)
    assert shot.preview_inputs == 3 and shot.stop_after_block and shot.action_format == loop.action_format
    assert loop.max_turns == 10 and "system.j2" not in loop.templates  # the loop's own settings are untouched


# --- ProposeRun.validate: which candidates get blind attempts, and when --------------------------------------


def _propose_run(monkeypatch, tmp_path: Path, reproduced: dict[str, bool]):
    """A ProposeRun whose validation passes every candidate as recorded, whose twins are candidates 0 and 1, and
    whose blind attempts reproduce as ``reproduced`` says; returns the run and the order of the blind attempts."""
    from autoenvscaling.roles.proposer import run as run_mod
    from autoenvscaling.roles.proposer.domain import domain_context
    from autoenvscaling.roles.proposer.novelty import NoveltyResult
    from autoenvscaling.roles.proposer.records import GenerationResult, GenerationStats, ProposalRecord
    from autoenvscaling.roles.proposer.records import ValidationStats as Stats

    class _Validation:
        def __init__(self, *_a, **_k) -> None:
            pass

        def run(self, candidates, on_done, resume=False):
            return [], None

    def record(gen, _report, _refs, _threshold):
        return ProposalRecord(
            id=gen.id, mode=gen.mode, domain="", episode_dir="", candidate_dir=gen.candidate_dir, verdict="valid",
            generation=GenerationStats(), validation=Stats(verdict="valid", recorded=True),
        )  # fmt: skip

    def novelty(task_dir: Path, refs: list[Path], _threshold: float = 0.0) -> NoveltyResult:
        twins = {"c0", "c1"}
        twin = task_dir.name in twins and any(r.name in twins for r in refs)
        return NoveltyResult(duplicate_of="c0" if twin else None)

    attempts: list[str] = []

    def blind(task_dir: Path, *_a, **_k) -> mod.Reproduction:
        attempts.append(task_dir.name)
        return mod.Reproduction(task=task_dir.name, rewards=[1.0 if reproduced[task_dir.name] else 0.0])

    monkeypatch.setattr(run_mod, "ValidationRun", _Validation)
    monkeypatch.setattr(run_mod, "proposal_record", record)
    monkeypatch.setattr(run_mod, "check_novelty", novelty)
    monkeypatch.setattr(mod, "reproduce", blind)
    config = run_mod.ProposeConfig(mode="prompt")
    run = run_mod.ProposeRun(tmp_path / "out", None, None, domain_context("terminal"), config, solver_factory=object)
    gens = [
        GenerationResult(id=f"c{i}", mode="prompt", episode_dir="", candidate_dir=str(tmp_path / f"c{i}"))
        for i in range(3)
    ]
    return run, gens, attempts


def test_a_twin_gets_no_blind_attempts_once_its_sibling_is_reproduced(monkeypatch, tmp_path):
    run, gens, attempts = _propose_run(monkeypatch, tmp_path, {"c0": True, "c1": True, "c2": False})
    records = run.validate(gens)
    assert attempts == ["c0", "c2"]
    assert [(r.id, r.verdict, r.failed_checks) for r in records] == [
        ("c0", "valid", []), ("c1", "invalid", ["duplicate-in-run"]), ("c2", "invalid", ["not-reproduced"]),
    ]  # fmt: skip
    logged = (tmp_path / "out" / "reproduce" / "results.jsonl").read_text().splitlines()
    assert sorted(mod.Reproduction.model_validate_json(x).task for x in logged) == ["c0", "c2"]


def test_a_resumed_validate_keeps_the_blind_attempts_already_logged(monkeypatch, tmp_path):
    run, gens, attempts = _propose_run(monkeypatch, tmp_path, {"c0": True, "c1": True, "c2": False})
    first = run.validate(gens)
    run.validate(gens, resume=True)
    assert attempts == ["c0", "c2"]  # none again
    (tmp_path / "out" / "reproduce" / "c2__blind-1").mkdir()  # a fresh run redoes them, from clean trial dirs
    again = run.validate(gens)
    assert attempts == ["c0", "c2"] * 2 and again == first
    assert not (tmp_path / "out" / "reproduce" / "c2__blind-1").exists()


def test_a_twin_gets_its_own_blind_attempts_when_its_sibling_is_not_reproduced(monkeypatch, tmp_path):
    run, gens, attempts = _propose_run(monkeypatch, tmp_path, {"c0": False, "c1": True, "c2": True})
    seen: list[str] = []
    records = run.validate(gens, on_reproduced=lambda gid, _r: seen.append(gid))
    assert attempts == ["c0", "c2", "c1"]  # the twin waited for its sibling's verdict
    assert seen == attempts
    assert [(r.id, r.verdict) for r in records] == [("c0", "invalid"), ("c1", "valid"), ("c2", "valid")]
    assert [r.validation.reproduce_rewards for r in records] == [[0.0], [1.0], [1.0]]
