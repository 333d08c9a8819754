"""An ATIF trajectory as player steps; for a proposer episode also each ``check`` and the draft's diff.

A staged proposer episode (a ``staged.json`` next to the trajectory) is read by ``staged_view``.

An agentic (workshop) proposer episode dir (``roles.proposer.episode``) keeps snapshots of the draft:
``start/starting-draft/``, ``checks/<nn>/<task-id>/`` (one per ``check`` call, with ``feedback.txt`` and
``report.json``) and ``final/<task-id>/``. The n-th step that ran ``check`` is shown with ``checks/<n>``'s result and
the diff from the snapshot before it; the last step with the diff to the final draft.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel

from autoenvscaling.agent.errors import TrajectoryError
from autoenvscaling.agent.trajectory import ContentPart, Step, Trajectory, read_trajectory
from autoenvscaling.validate.report import ValidationReport
from autoenvscaling.view.files import Root, read_text
from autoenvscaling.view.readers import read_model
from autoenvscaling.view.staged_view import add_staged, is_staged
from autoenvscaling.view.step_view import CallView, CheckView, StepView, draft_diff, snapshot_of

STEP_TEXT_MAX = 32_000  # characters of one message or output the player shows; the rest is in the file's pages


class TrajectoryView(BaseModel):
    agent: str
    model: str | None
    steps: list[StepView]
    totals: dict[str, float | int | None]
    extra: dict[str, object]
    episode: str | None  # the proposer episode dir under the root
    propose_run: str | None  # the run that holds the episode (its page has the verdict after validation)
    generation: dict[str, object]


def _text(content: str | list[ContentPart] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(p.text if p.text is not None else f"[{p.type}: {p.source.path if p.source else '?'}]"
                     for p in content)  # fmt: skip


def clip(text: str, limit: int = STEP_TEXT_MAX) -> str:
    """``text`` up to ``limit`` characters, with a note of what was left out (the page stays small)."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters: the whole step is in the trajectory file]"


def _when(ts: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")) if ts else None
    except ValueError:
        return None


def _step(step: Step, prev: Step | None) -> StepView:
    calls = [
        CallView(
            name=c.function_name,
            command=str(c.arguments.get("command", "")) or (json.dumps(c.arguments) if c.arguments else ""),
        )
        for c in step.tool_calls or []
    ]
    t0, t1 = _when(prev.timestamp if prev else None), _when(step.timestamp)
    m = step.metrics
    extra = step.extra or {}
    stage = extra.get("stage")
    return StepView(
        id=step.step_id,
        source=step.source,
        message=clip(_text(step.message)),
        reasoning=clip(step.reasoning_content) if step.reasoning_content else None,
        calls=calls,
        outputs=[clip(_text(r.content)) for r in (step.observation.results if step.observation else [])],
        prompt_tokens=m.prompt_tokens if m else None,
        completion_tokens=m.completion_tokens if m else None,
        cost_usd=m.cost_usd if m else None,
        timestamp=step.timestamp,
        seconds=(t1 - t0).total_seconds() if t0 and t1 else None,
        stage=stage if isinstance(stage, str) else None,
        harness=extra.get("harness") is True,
    )


def _check(root: Root, episode: Path, n: int) -> tuple[CheckView, Path | None] | None:
    d = episode / "checks" / f"{n:02d}"
    if not d.is_dir():
        return None
    report = read_model(d / "report.json", ValidationReport)
    feedback = read_text(d / "feedback.txt") or ""
    passed = report.is_valid if report else ("PASSED" in feedback.split("\n", 1)[0] or None)
    view = CheckView(
        number=n,
        dir=root.rel(d),
        feedback=feedback,
        verdict=report.verdict.value if report else None,
        failed_checks=report.failed_checks if report else [],
        passed=passed,
    )
    return view, snapshot_of(d)


def _add_episode(root: Root, episode: Path, steps: list[StepView]) -> None:
    before = episode / "start" / "starting-draft"
    snapshot: Path | None = before if before.is_dir() else None
    n = 0
    for step in steps:
        if any(c.command.strip() == "check" for c in step.calls):
            n += 1
            found = _check(root, episode, n)
            if found is None:
                continue
            step.check, after = found
            if after is not None:
                step.diff, step.diff_title = draft_diff(snapshot, after), f"draft at check {n}"
                snapshot = after
    final = snapshot_of(episode / "final")
    agent_steps = [s for s in steps if s.source == "agent"]
    if final is not None and agent_steps and agent_steps[-1].diff is None:
        agent_steps[-1].diff, agent_steps[-1].diff_title = draft_diff(snapshot, final), "final draft"


def trajectory_view(root: Root, path: Path) -> TrajectoryView:
    """Raises ``TrajectoryError`` (one line naming the file) when the file is not a valid ATIF trajectory."""
    traj: Trajectory = read_trajectory(path)
    steps = [_step(s, traj.steps[i - 1] if i else None) for i, s in enumerate(traj.steps)]
    episode = path.parent if (path.parent / "generation.json").is_file() else None
    if episode is not None:
        if is_staged(episode):
            add_staged(root, episode, steps)
        else:
            _add_episode(root, episode, steps)
    fm = traj.final_metrics
    generation = read_model_dict(episode / "generation.json") if episode else {}
    return TrajectoryView(
        agent=traj.agent.name,
        model=traj.agent.model_name,
        steps=steps,
        totals={
            "steps": len(steps),
            "prompt tokens": fm.total_prompt_tokens if fm else None,
            "completion tokens": fm.total_completion_tokens if fm else None,
            "cost $": fm.total_cost_usd if fm else None,
        },
        extra=dict(traj.extra or {}),
        episode=root.rel(episode) if episode else None,
        propose_run=root.rel(episode.parents[1]) if episode and root.inside(episode.parents[1]) else None,
        generation=generation,
    )


def read_model_dict(path: Path) -> dict[str, object]:
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


__all__ = ["StepView", "TrajectoryError", "TrajectoryView", "draft_diff", "trajectory_view"]
