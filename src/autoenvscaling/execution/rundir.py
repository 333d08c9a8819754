"""Crash-safe run-directory bookkeeping: atomic writes, the append-only results log, the run lock, run ids.

Every job that writes a run directory uses these; only the driver process writes (workers return their files).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

import tomli_w
from pydantic import BaseModel, ValidationError

from autoenvscaling.errors import UserInputError

T = TypeVar("T", bound=BaseModel)


def fsync_dir(path: Path) -> None:
    """Make a rename or a new entry in ``path`` durable (a file's own fsync does not cover its directory entry)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: str | bytes, *, durable: bool = True) -> None:
    """Write a sibling temp file, fsync it, rename it over ``path``, fsync the directory: after a crash readers
    see the old file or the whole new one, and a finished write survives a power loss. ``durable=False`` keeps
    the first promise only (no fsync): for files rewritten many times whose last write is durable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with tmp.open("wb") as f:
        f.write(raw)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if durable:
        fsync_dir(path.parent)


def new_run_id(prefix: str) -> str:
    return f"{prefix}-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


def latest_run_dir(runs_root: Path, prefix: str) -> Path | None:
    candidates = sorted((p for p in runs_root.glob(f"{prefix}-*") if p.is_dir()), key=lambda p: p.stat().st_mtime)
    return candidates[-1] if candidates else None


def fresh_dir(path: Path) -> Path:
    """An empty dir at ``path`` (whatever a half-done step left there is removed)."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


class ResultsLog(Generic[T]):
    """Append-only JSONL of records; each line is flushed and fsynced before ``append``/``extend`` returns."""

    def __init__(self, path: Path, model: type[T]) -> None:
        self.path = path
        self.model = model
        self._lock = threading.Lock()

    def load(self) -> list[T]:
        """Records already written. Only a torn last line (a crash mid-write) is cut off the file; an unreadable
        line in the middle is skipped (and kept), so the good records after it are not lost."""
        if not self.path.exists():
            return []
        raw = self.path.read_bytes()
        lines = raw.splitlines(keepends=True)
        records: list[T] = []
        for i, line in enumerate(lines):
            last = i == len(lines) - 1
            try:
                records.append(self.model.model_validate_json(line))
            except ValidationError:
                if last:  # torn (or garbled) tail: the only line a crash can leave half-written
                    with self.path.open("r+b") as f:
                        f.truncate(len(raw) - len(line))
                continue
            if last and not line.endswith(b"\n"):
                with self.path.open("ab") as f:  # a complete record whose newline never made it
                    f.write(b"\n")
        return records

    def append(self, record: T) -> None:
        self.extend([record])

    def extend(self, records: Sequence[T]) -> None:
        """Append ``records`` with one write and one fsync (a group commit: a batch costs what one record does)."""
        if not records:
            return
        text = "".join(r.model_dump_json() + "\n" for r in records)
        with self._lock:
            created = not self.path.exists()
            with self.path.open("a", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            if created:
                fsync_dir(self.path.parent)

    def reset(self) -> None:
        self.path.unlink(missing_ok=True)


def _strip_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _strip_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_strip_none(v) for v in value if v is not None]
    if isinstance(value, Path):
        return str(value)
    return value


def write_resolved_config(run_dir: Path, config: dict[str, Any]) -> Path:
    """``config.resolved.toml``: what this run actually used (TOML has no null, so unset values are left out)."""
    path = run_dir / "config.resolved.toml"
    write_atomic(path, tomli_w.dumps(_strip_none(config)))
    return path


@contextmanager
def run_lock(root: Path, what: str = "run") -> Iterator[None]:
    """One process per run dir: a second process on the same dir while the first still runs is refused."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("a") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserInputError(f"{root}: another process is running this {what}") from None
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
