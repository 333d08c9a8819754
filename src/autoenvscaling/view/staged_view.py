"""A staged proposer episode in the player: the stage of each step, the draft's files as they became, the check.

The staged proposer (``roles.proposer.staged``) makes every model call and every harness run an ATIF step with
``extra.stage``. Its episode dir holds the snapshots the harness wrote::

    staged.json              StagedLog: decisions, guard, check_passed / check_failed
    work/draft-NN/<id>/      a draft written before each harness run (an ``observe`` step, or the ``record``
                             step of the finish, whose draft is the last one)
    final/<id>/              the task dir with its recorded expectations (written before "recorded: ...")
    check/trials/            the validator's trials (the ``check`` step)

The n-th harness step that ran a draft (``observe``, or a ``record`` that did not record) gets ``work/draft-n``
and the diff from the snapshot before it; the ``record`` step that recorded the outputs gets ``final/`` (the tests
with the recorded answers appear there); the ``check`` step gets the validator's result from ``staged.json``.
"""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.roles.proposer.staged.state import StagedLog
from autoenvscaling.view.files import Root
from autoenvscaling.view.readers import read_model
from autoenvscaling.view.step_view import CheckView, StepView, draft_diff, snapshot_of

STAGED_LOG = "staged.json"
DRAFT_STAGES = ("observe", "record")  # harness steps that ran a freshly written draft


def is_staged(episode: Path) -> bool:
    return (episode / STAGED_LOG).is_file()


def _drafts(episode: Path) -> list[Path]:
    work = episode / "work"
    dirs = sorted(p for p in work.iterdir() if p.is_dir() and p.name.startswith("draft-")) if work.is_dir() else []
    return [s for s in (snapshot_of(d) for d in dirs) if s is not None]


def _check(root: Root, episode: Path, step: StepView, log: StagedLog | None) -> CheckView:
    first = step.message.strip().split("\n", 1)[0]
    verdict = first.removeprefix("check:").split()[0] if first.startswith("check:") and first[6:].strip() else None
    passed = log.check_passed if log is not None and log.check_passed is not None else verdict == "valid"
    check_dir = episode / "check"
    return CheckView(
        number=1,
        dir=root.rel(check_dir if check_dir.is_dir() else episode),
        feedback=step.message,
        verdict=verdict,
        failed_checks=list(log.check_failed) if log is not None else [],
        passed=passed,
    )


def add_staged(root: Root, episode: Path, steps: list[StepView]) -> None:
    """Fill each harness step's diff (the draft it ran, or the final task dir) and the check's result."""
    log = read_model(episode / STAGED_LOG, StagedLog)
    drafts = iter(_drafts(episode))
    final = snapshot_of(episode / "final")
    snapshot: Path | None = None
    for step in steps:
        if not step.harness:
            continue
        after, title = None, ""
        if step.stage == "record" and step.message.startswith("recorded") and final is not None:
            after, title = final, "the task as recorded (tests with the recorded answers)"
        elif step.stage in DRAFT_STAGES:
            after = next(drafts, None)
            title = f"draft {after.parent.name.removeprefix('draft-')} that this step ran" if after else ""
        if step.stage == "check":
            step.check = _check(root, episode, step, log)
        if after is not None:
            step.diff = draft_diff(snapshot, after)
            step.diff_title = title + (" (all files)" if snapshot is None else "")
            snapshot = after
