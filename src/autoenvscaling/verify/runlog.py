"""Crash-safe run bookkeeping shared by every job that writes a run directory."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

import tomli_w
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)


def new_run_id(prefix: str) -> str:
    return f"{prefix}-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


def latest_run_dir(runs_root: Path, prefix: str) -> Path | None:
    candidates = sorted((p for p in runs_root.glob(f"{prefix}-*") if p.is_dir()), key=lambda p: p.stat().st_mtime)
    return candidates[-1] if candidates else None


class ResultsLog(Generic[T]):
    """Append-only JSONL of records; each line is flushed and fsynced before the call returns."""

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
        line = record.model_dump_json() + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

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
    path.write_text(tomli_w.dumps(_strip_none(config)), encoding="utf-8")
    return path
