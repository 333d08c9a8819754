"""Run dirs under the served root: what kind each is, whether it finished, and its headline figures.

Kinds, told apart by what the writing code leaves on disk (see the layout docstrings of ``validate.run``,
``roles.solve_run``, ``roles.proposer.run``, ``flywheel.layout`` and ``pool.catalog``):

- flywheel: ``rounds/`` (and ``metrics.jsonl`` once a round finished)
- propose: ``episodes/`` (a propose run, or one domain of a flywheel round's propose stage)
- validate / solve: ``results.jsonl`` of ``ValidationReport`` / ``AttemptRecord`` lines
- pool: ``catalog.sqlite``
"""

from __future__ import annotations

import fcntl
import json
import re
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from autoenvscaling.pool.schema import is_pool
from autoenvscaling.view.files import Root, mtime

Kind = Literal["flywheel", "propose", "validate", "solve", "pool"]
KINDS: tuple[Kind, ...] = ("flywheel", "propose", "validate", "solve", "pool")
_STAMP = re.compile(r"(\d{8})-(\d{6})")
_SCAN_DEPTH = 2


class RunInfo(BaseModel):
    kind: Kind
    rel: str  # path under the served root
    name: str
    started: datetime
    status: str  # finished | running | unfinished
    headline: str


def first_json_line(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as f:
            line = f.readline(1_000_000)
        value = json.loads(line)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def count_lines(path: Path) -> int:
    try:
        with path.open("rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def detect_kind(d: Path) -> Kind | None:
    if (d / "rounds").is_dir() and (d / "config.resolved.toml").is_file():
        return "flywheel"
    if is_pool(d):
        return "pool"
    if (d / "episodes").is_dir():
        return "propose"
    first = first_json_line(d / "results.jsonl")
    if first is not None:
        if "verdict" in first and "checks" in first:
            return "validate"
        if "attempt" in first:
            return "solve"
    summary = read_json(d / "summary.json")
    if isinstance(summary, dict):
        if "by_verdict" in summary and "phase_sec" in summary:
            return "validate"
        if isinstance(summary.get("tasks"), list):
            return "solve"
    if (d / "config.resolved.toml").is_file():
        for kind in ("validate", "solve"):
            if d.name.startswith(f"{kind}-"):
                return kind
    return None


def is_locked(lock: Path) -> bool:
    """True while a flywheel process holds the run's lock (read-only probe: nothing is created)."""
    try:
        with lock.open("rb") as f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def started_at(d: Path) -> datetime:
    m = _STAMP.search(d.name)
    if m:
        try:
            return datetime.strptime("".join(m.groups()), "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        except ValueError:
            pass
    stamp = mtime(d / "config.resolved.toml") or mtime(d)
    return datetime.fromtimestamp(stamp, UTC)


def _finished(d: Path) -> str:
    summary = mtime(d / "summary.json")
    return "finished" if summary and summary >= mtime(d / "results.jsonl") else "unfinished"


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def _validate_headline(d: Path) -> str:
    summary = read_json(d / "summary.json")
    if isinstance(summary, dict) and _finished(d) == "finished":
        verdicts = ", ".join(f"{v} {k}" for k, v in sorted(summary.get("by_verdict", {}).items()))
        return f"{summary.get('total', 0)} tasks: {verdicts or 'none'}"
    return f"{count_lines(d / 'results.jsonl')} tasks validated so far"


def _solve_headline(d: Path) -> str:
    summary = read_json(d / "summary.json")
    if isinstance(summary, dict) and _finished(d) == "finished":
        tasks = [t for t in summary.get("tasks", []) if isinstance(t, dict)]
        attempts = sum(int(t.get("attempts", 0)) for t in tasks)
        solved = sum(int(t.get("solved", 0)) for t in tasks)
        return f"{len(tasks)} tasks, {attempts} attempts, {solved} solved"
    return f"{count_lines(d / 'results.jsonl')} attempts so far"


def _propose_headline(d: Path) -> str:
    summary = read_json(d / "summary.json")
    if isinstance(summary, dict):
        return (
            f"{summary.get('valid', 0)}/{summary.get('total', 0)} valid ({summary.get('mode', '?')}, "
            f"{summary.get('domain', '?')}), {summary.get('tokens', 0)} tokens"
        )
    episodes = d / "episodes"
    return f"{sum(1 for _ in episodes.iterdir()) if episodes.is_dir() else 0} episodes"


def flywheel_rounds(d: Path) -> tuple[list[dict[str, Any]], int]:
    """(metrics.jsonl records, the number of rounds configured)."""
    metrics: list[dict[str, Any]] = []
    try:
        for line in (d / "metrics.jsonl").read_text(encoding="utf-8").splitlines():
            try:
                metrics.append(json.loads(line))
            except ValueError:
                continue
    except OSError:
        pass
    rounds = read_toml(d / "config.resolved.toml").get("rounds", 0)
    return metrics, rounds if isinstance(rounds, int) else 0


def _flywheel_headline(d: Path) -> str:
    metrics, rounds = flywheel_rounds(d)
    valid = sum(int(m.get("valid", 0)) for m in metrics)
    learnable = sum(int(m.get("learnable", 0)) for m in metrics)
    pool = metrics[-1].get("pool_size", 0) if metrics else 0
    return f"{len(metrics)}/{rounds} rounds, {valid} valid, {learnable} learnable, pool {pool}"


def _flywheel_status(d: Path) -> str:
    if is_locked(d / ".lock"):
        return "running"
    metrics, rounds = flywheel_rounds(d)
    return "finished" if rounds and len(metrics) >= rounds else "unfinished"


def run_info(root: Root, d: Path, kind: Kind) -> RunInfo:
    if kind == "flywheel":
        status, headline = _flywheel_status(d), _flywheel_headline(d)
    elif kind == "pool":
        from autoenvscaling.view.pool_read import pool_headline

        status, headline = "finished", pool_headline(d)
    elif kind == "propose":
        status, headline = _finished(d), _propose_headline(d)
    elif kind == "validate":
        status, headline = _finished(d), _validate_headline(d)
    else:
        status, headline = _finished(d), _solve_headline(d)
    return RunInfo(kind=kind, rel=root.rel(d), name=d.name, started=started_at(d), status=status, headline=headline)


def find_runs(root: Root) -> list[RunInfo]:
    """Every run dir (and pool) at the root or up to two levels below it, newest first. A recognised dir is not
    searched further (a flywheel's stages are reached from its own page)."""
    found: list[RunInfo] = []

    def scan(d: Path, depth: int) -> None:
        kind = detect_kind(d)
        if kind is not None:
            found.append(run_info(root, d, kind))
            return
        if depth >= _SCAN_DEPTH:
            return
        try:
            children = sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))
        except OSError:
            return
        for child in children:
            if root.inside(child):
                scan(child, depth + 1)

    scan(root.path, 0)
    found.sort(key=lambda r: (r.started, r.name), reverse=True)
    return found
