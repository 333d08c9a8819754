"""One step of the trajectory player and what the proposer's episodes attach to it: a check's result and the
diff of the draft. Shared by ``trajectory_view`` (ATIF steps, workshop episodes) and ``staged_view``."""

from __future__ import annotations

import difflib
from pathlib import Path

from pydantic import BaseModel

from autoenvscaling.view.files import read_text

_DIFF_MAX_BYTES = 200_000


class DiffLine(BaseModel):
    kind: str  # add | del | hunk | ctx
    text: str


class FileDiff(BaseModel):
    path: str
    status: str  # added | removed | changed
    lines: list[DiffLine]


class CheckView(BaseModel):
    number: int
    dir: str
    feedback: str
    verdict: str | None
    failed_checks: list[str]
    passed: bool | None


class CallView(BaseModel):
    name: str
    command: str


class StepView(BaseModel):
    id: int
    source: str
    message: str
    reasoning: str | None
    calls: list[CallView]
    outputs: list[str]
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    timestamp: str | None
    seconds: float | None  # since the previous step
    stage: str | None = None  # a staged proposer episode: the stage this step belongs to (``extra.stage``)
    harness: bool = False  # ... and whether the harness wrote it (what it ran and saw), not the model's prompt
    check: CheckView | None = None
    diff: list[FileDiff] | None = None
    diff_title: str = ""


def _files(d: Path | None) -> dict[str, str]:
    if d is None or not d.is_dir():
        return {}
    out = {}
    for f in sorted(p for p in d.rglob("*") if p.is_file()):
        size = f.stat().st_size
        text = read_text(f, _DIFF_MAX_BYTES) if size <= _DIFF_MAX_BYTES else None
        out[f.relative_to(d).as_posix()] = text if text is not None else f"[{size} bytes]"
    return out


def draft_diff(before: Path | None, after: Path | None) -> list[FileDiff]:
    a, b = _files(before), _files(after)
    diffs = []
    for path in sorted(a.keys() | b.keys()):
        old, new = a.get(path), b.get(path)
        if old == new:
            continue
        status = "added" if old is None else "removed" if new is None else "changed"
        lines = []
        for line in list(difflib.unified_diff((old or "").splitlines(), (new or "").splitlines(), lineterm=""))[2:]:
            kind = "hunk" if line.startswith("@@") else {"+": "add", "-": "del"}.get(line[:1], "ctx")
            lines.append(DiffLine(kind=kind, text=line))
        diffs.append(FileDiff(path=path, status=status, lines=lines))
    return diffs


def snapshot_of(d: Path) -> Path | None:
    """The task dir inside a check or final dir (the one subdir holding a task.toml or instruction.md)."""
    if not d.is_dir():
        return None
    for sub in sorted(p for p in d.iterdir() if p.is_dir()):
        if (sub / "task.toml").is_file() or (sub / "instruction.md").is_file():
            return sub
    return None
