"""A staged proposer episode dir, written by the staged proposer's own writers (``TrajectoryRecorder``,
``write_draft``, ``StagedLog``) in the order ``roles.proposer.staged`` writes it: for the player's tests."""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.agent.trajectory import AgentInfo, TrajectoryRecorder
from autoenvscaling.roles.proposer.records import GenerationResult
from autoenvscaling.roles.proposer.staged.render import write_draft
from autoenvscaling.roles.proposer.staged.spec import DraftFiles, Expectation
from autoenvscaling.roles.proposer.staged.state import StagedLog

TASK = "staged-000"


def write_parent(root: Path) -> Path:
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
