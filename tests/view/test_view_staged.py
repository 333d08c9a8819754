"""The player on a staged proposer episode: each step's stage, the draft each harness run ran (as a diff from the
one before), the task as recorded, and the check's result. The episode dir is written by the staged proposer's own
writers (``TrajectoryRecorder``, ``write_draft``, ``StagedLog``) in the order ``roles.proposer.staged`` writes it."""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.agent.trajectory import AgentInfo, TrajectoryRecorder
from autoenvscaling.roles.proposer.records import GenerationResult
from autoenvscaling.roles.proposer.staged.episode import StagedLog
from autoenvscaling.roles.proposer.staged.render import write_draft
from autoenvscaling.roles.proposer.staged.spec import DraftFiles, Expectation
from autoenvscaling.view.app import make_templates
from autoenvscaling.view.files import Root
from autoenvscaling.view.trajectory_view import StepView, trajectory_view

TASK = "staged-000"


def _parent(root: Path) -> Path:
    parent = root / "parent"
    (parent / "environment").mkdir(parents=True)
    (parent / "environment" / "Dockerfile").write_text("FROM autoenv/base\nCOPY numbers.txt /app/numbers.txt\n")
    (parent / "environment" / "numbers.txt").write_text("3\n1\n")
    return parent


def write_staged_episode(episode: Path, parent: Path, *, check_passed: bool = True) -> None:
    """idea -> data -> solution -> observe (draft 1) -> decide fix_data -> data -> observe (draft 2) -> decide ok ->
    instruction -> record (draft 3, final/) -> check."""
    episode.mkdir(parents=True)
    rec = TrajectoryRecorder(episode / "trajectory.json", agent=AgentInfo(name="autoenv-proposer-staged", version="0"))
    files = DraftFiles(data={"numbers.txt": "3\n1\n2\n"}, instruction="", solve_sh="sort -n /app/numbers.txt")
    drafts = 0

    def draft(dest: Path | None = None, **kw: object) -> Path:
        nonlocal drafts
        if dest is None:
            drafts += 1
            dest = episode / "work" / f"draft-{drafts:02d}" / TASK
        common = {"name": "sorted", "description": "sort", "category": "text", "outputs": ["/app/result.txt"]}
        return write_draft(dest, parent=parent, files=files, **common, **kw)  # type: ignore[arg-type]

    def call(stage: str, reply: str) -> None:
        rec.add_step("user", f"the {stage} prompt", extra={"stage": stage})
        rec.add_step("agent", reply, extra={"stage": stage})

    def note(stage: str, text: str) -> None:
        rec.add_step("user", text, extra={"stage": stage, "harness": True})

    rec.add_step("system", "you write one piece of a task per call")
    call("idea", '{"operator": "add-data", "change": "sort the numbers"}')
    call("data", "2")
    call("solution", "```bash\nsort -n /app/numbers.txt\n```")
    draft()
    note("observe", "exit 0; /app/result.txt: (not written)")
    call("decide", '{"decision": "fix_data"}')
    files.data = {"numbers.txt": "3\n1\n2\n10\n"}
    files.solve_sh = "sort -n /app/numbers.txt > /app/result.txt"
    call("data", "10")
    draft()
    note("observe", "exit 0; /app/result.txt: 1 2 3 10")
    call("decide", '{"decision": "ok"}')
    files.instruction = "Sort the numbers in /app/numbers.txt into /app/result.txt."
    call("instruction", files.instruction)
    draft()
    expected = {"/app/result.txt": "1\n2\n3\n10\n"}
    draft(episode / "final" / TASK, expectations=[Expectation(path="/app/result.txt", expected="result.txt")],
          expected=expected)  # fmt: skip
    note("record", "recorded: /app/result.txt (exact)")
    (episode / "check" / "trials").mkdir(parents=True)
    note("check", "check: valid" if check_passed else "check: invalid oracle")
    log = StagedLog(parent="parent", recorded=True, check_passed=check_passed,
                    check_failed=[] if check_passed else ["oracle"])  # fmt: skip
    (episode / "staged.json").write_text(log.model_dump_json())
    rec.finish(exit_reason="submitted" if check_passed else "check-failed")
    result = GenerationResult(id=TASK, mode="staged", episode_dir=str(episode), exit_reason="submitted")
    (episode / "generation.json").write_text(result.model_dump_json())


def _steps(tmp_path: Path, **kw: bool) -> list[StepView]:
    episode = tmp_path / "run" / "episodes" / TASK
    write_staged_episode(episode, _parent(tmp_path), **kw)
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
    write_staged_episode(episode, _parent(tmp_path))
    root = Root(tmp_path)
    view = trajectory_view(root, episode / "trajectory.json")
    html = make_templates().get_template("trajectory.html").render(request=None, root=root, view=view,
                                                                   path=episode / "trajectory.json")  # fmt: skip
    assert html.count('class="tag stage"') == len(view.steps) - 1  # every step but the system prompt
    assert "stage observe (harness)" in html and "what the harness ran and saw" in html
    assert "check: passed (validator verdict valid)" in html
    assert '<span class="d-add">+10</span>' in html
    assert "has-diff" in html
