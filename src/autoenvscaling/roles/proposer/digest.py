"""A deterministic digest (no LLM) of solver attempts: what each attempt did, where it failed, where it stopped.

Input: Harbor trial dirs (``runs/solve-*/trials/<task>__<n>/`` with ``result.json`` and
``agent/trajectory.json``). Failed commands come from the ATIF observations' ``extra`` facts the agent loop
records (``exit_code``, ``timed_out``), so no output text has to be re-parsed to know what failed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from autoenvscaling.agent.errors import TrajectoryError
from autoenvscaling.agent.trajectory import Trajectory, read_trajectory
from autoenvscaling.verify.results import TrialResult, is_solved

_MAX_COMMAND_CHARS = 200
_MAX_ERROR_LINES = 3
_MAX_LINE_CHARS = 160
_FAILED_SHOWN = 5  # failed commands listed per attempt in the rendered digest
_ERRORISH = re.compile(
    r"error|exception|traceback|not found|no such|denied|invalid|cannot|can't|failed|fatal|unable|usage:",
    re.IGNORECASE,
)
_HEADER = re.compile(r"^(Exit code: -?\d+|The command timed out after .*|Output:|\(no output\))$")
_LIMIT_REASONS = ("max_turns", "max_tokens", "max_wall", "max_cost", "format_errors", "repeats")


class FailedCommand(BaseModel):
    step: int
    command: str
    exit_code: int | None = None
    timed_out: bool = False
    error_lines: list[str] = Field(default_factory=list)


class AttemptDigest(BaseModel):
    trial: str  # the trial dir's name, e.g. "log-error-summary__2"
    task: str
    attempt: int | None = None
    reward: float | None = None
    error: str | None = None  # infrastructure error (no reward)
    turns: int = 0
    exit_reason: str | None = None
    limits_hit: list[str] = Field(default_factory=list)
    commands: int = 0
    failed_commands: list[FailedCommand] = Field(default_factory=list)
    last_command: str | None = None
    tokens: int = 0
    cost_usd: float = 0.0

    @property
    def solved(self) -> bool:
        return is_solved(self.reward)


def find_trial_dirs(path: Path) -> list[Path]:
    """Trial dirs under ``path``: a solve run dir (``trials/``), a trials dir, or one trial dir."""
    if (path / "result.json").is_file():
        return [path]
    root = path / "trials" if (path / "trials").is_dir() else path
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / "result.json").is_file())


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())  # one line: heredocs and long outputs stay readable in a list
    return text if len(text) <= limit else text[: limit - 3] + "..."


def error_lines(observation: str) -> list[str]:
    """The first lines of a command's output that look like errors (else its last lines)."""
    lines = [ln.strip() for ln in observation.splitlines()]
    lines = [ln for ln in lines if ln and not _HEADER.match(ln) and not ln.startswith("[... ")]
    picked = [ln for ln in lines if _ERRORISH.search(ln)][:_MAX_ERROR_LINES] or lines[-2:]
    return [_clip(ln, _MAX_LINE_CHARS) for ln in picked]


def _commands(traj: Trajectory) -> tuple[int, list[FailedCommand], str | None]:
    count, failed, last = 0, [], None
    for step in traj.steps:
        if step.source != "agent" or not step.tool_calls:
            continue
        results = {r.source_call_id: r for r in (step.observation.results if step.observation else [])}
        for call in step.tool_calls:
            command = call.arguments.get("command")
            if not isinstance(command, str) or not command.strip():
                continue
            count += 1
            last = _clip(command, _MAX_COMMAND_CHARS)
            res = results.get(call.tool_call_id)
            facts = (res.extra or {}) if res else {}
            code, timed_out = facts.get("exit_code"), bool(facts.get("timed_out"))
            if timed_out or (isinstance(code, int) and code != 0):
                content = res.content if res is not None and isinstance(res.content, str) else ""
                failed.append(
                    FailedCommand(
                        step=step.step_id,
                        command=last,
                        exit_code=code if isinstance(code, int) else None,
                        timed_out=timed_out,
                        error_lines=error_lines(content),
                    )
                )
    return count, failed, last


def digest_trial(trial_dir: Path) -> AttemptDigest:
    """One attempt's digest; a missing or unreadable trajectory leaves the command fields empty."""
    result = TrialResult.model_validate_json((trial_dir / "result.json").read_bytes())
    task, _, n = trial_dir.name.rpartition("__")
    ctx = result.agent_result
    meta = ctx.metadata if ctx else {}
    err = result.exception_info
    digest = AttemptDigest(
        trial=trial_dir.name,
        task=result.task_name or task,
        attempt=int(n) if n.isdigit() else None,
        reward=result.reward,
        error=f"{err.exception_type}: {_clip(err.exception_message, 200)}" if err and result.reward is None else None,
        turns=int(meta.get("turns", 0) or 0),
        exit_reason=str(meta["exit_reason"]) if meta.get("exit_reason") else None,
        tokens=((ctx.n_input_tokens or 0) + (ctx.n_output_tokens or 0)) if ctx else 0,
        cost_usd=(ctx.cost_usd or 0.0) if ctx else 0.0,
    )
    if err is not None and err.exception_type == "AgentTimeoutError":
        digest.limits_hit.append("agent_timeout")
    path = trial_dir / "agent" / "trajectory.json"
    if path.is_file():
        try:
            traj = read_trajectory(path)
        except TrajectoryError:
            traj = None
        if traj is not None:
            extra = traj.extra or {}
            digest.turns = digest.turns or int(extra.get("turns", 0) or 0)
            digest.exit_reason = digest.exit_reason or (str(extra["exit_reason"]) if "exit_reason" in extra else None)
            digest.commands, digest.failed_commands, digest.last_command = _commands(traj)
    if digest.exit_reason in _LIMIT_REASONS:
        digest.limits_hit.insert(0, digest.exit_reason)
    return digest


def digest_trials(paths: list[Path]) -> list[AttemptDigest]:
    """Digests of trial dirs (each path a trial dir, a trials dir or a solve run dir); unreadable ones skipped."""
    out: list[AttemptDigest] = []
    for p in paths:
        for trial in find_trial_dirs(p):
            try:
                out.append(digest_trial(trial))
            except (OSError, ValidationError):
                continue
    return out


def _reward_text(d: AttemptDigest) -> str:
    return "error" if d.reward is None else f"reward {d.reward:g}"


def _task_table(digests: list[AttemptDigest]) -> list[str]:
    by_task: dict[str, list[AttemptDigest]] = defaultdict(list)
    for d in digests:
        by_task[d.task].append(d)
    lines = ["| task | attempts | solved | mean turns | limits hit |", "|---|---|---|---|---|"]
    for task, ds in sorted(by_task.items()):
        turns = sum(d.turns for d in ds) / len(ds)
        limits = sorted({lim for d in ds for lim in d.limits_hit})
        lines.append(f"| {task} | {len(ds)} | {sum(d.solved for d in ds)} | {turns:.1f} | {', '.join(limits) or '-'} |")
    return lines


def _attempt_lines(d: AttemptDigest) -> list[str]:
    stop = f", stopped: {d.exit_reason}" if d.exit_reason else ""
    lines = [f"### {d.trial}: {_reward_text(d)}, {d.turns} turns, {d.commands} commands{stop}"]
    if d.error:
        lines.append(f"- infrastructure error: {d.error}")
    for f in d.failed_commands[:_FAILED_SHOWN]:
        how = "timed out" if f.timed_out else f"exit {f.exit_code}"
        errs = " | ".join(f.error_lines)
        lines.append(f"- failed (step {f.step}, {how}): `{f.command}`" + (f" -> {errs}" if errs else ""))
    if len(d.failed_commands) > _FAILED_SHOWN:
        lines.append(f"- ... {len(d.failed_commands) - _FAILED_SHOWN} more failed commands")
    if d.last_command:
        lines.append(f"- last command: `{d.last_command}`")
    return lines


def render_digest(digests: list[AttemptDigest]) -> str:
    """Compact markdown: a per-task table, then per attempt its failed commands and where it stopped."""
    if not digests:
        return "# Solver digest\n\nNo solver trajectories were given.\n"
    tasks = len({d.task for d in digests})
    solved = sum(d.solved for d in digests)
    out = [
        "# Solver digest",
        "",
        f"{len(digests)} attempts on {tasks} tasks; {solved} solved (reward 1). "
        "Raw trajectories: <trial>/trajectory.json next to this file.",
        "",
        *_task_table(digests),
    ]
    for d in digests:
        out += ["", *_attempt_lines(d)]
    return "\n".join(out) + "\n"
