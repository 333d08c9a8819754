"""The player on a staged proposer episode (``staged_episode``): each step's stage, the draft each harness run ran
(as a diff from the one before), the task as recorded, and the check's result."""

from __future__ import annotations

from pathlib import Path

from staged_episode import TASK, write_parent, write_staged_episode

from autoenvscaling.view.app import make_templates
from autoenvscaling.view.files import Root
from autoenvscaling.view.trajectory_view import StepView, trajectory_view


def _steps(tmp_path: Path, **kw: bool) -> list[StepView]:
    episode = tmp_path / "run" / "episodes" / TASK
    write_staged_episode(episode, write_parent(tmp_path), **kw)
    return trajectory_view(Root(tmp_path), episode / "trajectory.json").steps


def test_each_step_carries_its_stage_and_who_wrote_it(tmp_path: Path) -> None:
    steps = _steps(tmp_path)
    assert [s.stage for s in steps if s.source == "agent"] == [
        "idea", "data", "solution", "decide", "data", "decide", "instruction",
    ]  # fmt: skip
    assert [(s.stage, s.harness) for s in steps if s.harness] == [
        ("observe", True), ("observe", True), ("record", True), ("check", True),
    ]  # fmt: skip
    assert steps[0].stage is None and not steps[0].harness


def test_each_harness_run_shows_what_the_draft_became(tmp_path: Path) -> None:
    steps = _steps(tmp_path)
    with_diff = [s for s in steps if s.diff is not None]
    assert [s.stage for s in with_diff] == ["observe", "observe", "record"]
    first, second, recorded = with_diff
    assert "all files" in first.diff_title and "draft 01" in first.diff_title
    assert {f.path for f in first.diff or []} >= {"environment/numbers.txt", "solution/solve.sh", "task.toml"}
    by_path = {f.path: f for f in second.diff or []}
    assert set(by_path) == {"environment/numbers.txt", "solution/solve.sh"}  # the data appended, the script fixed
    assert [ln.text for ln in by_path["environment/numbers.txt"].lines if ln.kind == "add"] == ["+10"]
    assert any(ln.kind == "add" and "> /app/result.txt" in ln.text for ln in by_path["solution/solve.sh"].lines)
    changed = {f.path: f.status for f in recorded.diff or []}
    assert changed["instruction.md"] == "changed" and changed["tests/expected/result.txt"] == "added"
    assert "recorded" in recorded.diff_title
    expected = next(f for f in recorded.diff or [] if f.path == "tests/expected/result.txt")
    assert [ln.text for ln in expected.lines if ln.kind == "add"] == ["+1", "+2", "+3", "+10"]


def test_the_check_step_shows_the_validators_result(tmp_path: Path) -> None:
    check = next(s for s in _steps(tmp_path) if s.stage == "check").check
    assert check is not None and check.passed is True and check.verdict == "valid"
    assert check.dir.endswith("check")
    failed = next(s for s in _steps(tmp_path / "b", check_passed=False) if s.stage == "check").check
    assert failed is not None and failed.passed is False and failed.failed_checks == ["oracle"]
    assert failed.verdict == "invalid"


def test_the_page_renders_stages_diffs_and_the_check(tmp_path: Path) -> None:
    episode = tmp_path / "run" / "episodes" / TASK
    write_staged_episode(episode, write_parent(tmp_path))
    root = Root(tmp_path)
    view = trajectory_view(root, episode / "trajectory.json")
    html = make_templates().get_template("trajectory.html").render(request=None, root=root, view=view,
                                                                   path=episode / "trajectory.json")  # fmt: skip
    assert html.count('class="tag stage"') == len(view.steps) - 1  # every step but the system prompt
    assert "stage observe (harness)" in html and "what the harness ran and saw" in html
    assert "check: passed (validator verdict valid)" in html
    assert '<span class="d-add">+10</span>' in html
    assert "has-diff" in html
