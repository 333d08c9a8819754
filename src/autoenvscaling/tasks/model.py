"""Load and save whole task directories. Malformed input raises ``TaskFormatError`` naming file and field."""

from __future__ import annotations

import hashlib
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import ValidationError

from autoenvscaling.tasks.config import TaskConfig
from autoenvscaling.tasks.errors import TaskFormatError
from autoenvscaling.tasks.paths import TaskPaths


@dataclass(frozen=True)
class Task:
    """A loaded task: its directory, parsed config and instruction text."""

    paths: TaskPaths
    config: TaskConfig
    instruction: str

    @property
    def name(self) -> str:
        """Short id used for trial dirs: the task dir's name."""
        return self.paths.name

    @property
    def display_name(self) -> str:
        return self.config.task.name or self.paths.name

    def content_hash(self) -> str:
        """SHA-256 over the task's normalized files (path + bytes), independent of mtimes and location."""
        return task_content_hash(self.paths.root)


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(root)"
    return f"{loc}: {first['msg']}"


def parse_task_toml(path: Path) -> TaskConfig:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TaskFormatError(f"{path}: missing (every task needs a task.toml)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TaskFormatError(f"{path}: cannot read: {e}") from None
    return parse_task_toml_text(raw, source=str(path))


def parse_task_toml_text(raw: str, source: str = "task.toml") -> TaskConfig:
    try:
        data: dict[str, Any] = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as e:
        raise TaskFormatError(f"{source}: invalid TOML: {e}") from None
    try:
        return TaskConfig.model_validate(data)
    except ValidationError as e:
        raise TaskFormatError(f"{source}: field {_first_error(e)}") from None


def load_task(root: Path | str) -> Task:
    paths = TaskPaths(Path(root).resolve())
    if not paths.root.is_dir():
        raise TaskFormatError(f"{paths.root}: not a task directory")
    config = parse_task_toml(paths.config)
    try:
        instruction = paths.instruction.read_text(encoding="utf-8")
    except FileNotFoundError:
        # Multi-step tasks keep one instruction per step in steps/<name>/; a root one is optional.
        if config.is_multi_step:
            return Task(paths=paths, config=config, instruction="")
        raise TaskFormatError(f"{paths.instruction}: missing (every task needs an instruction.md)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TaskFormatError(f"{paths.instruction}: cannot read: {e}") from None
    return Task(paths=paths, config=config, instruction=instruction)


def dump_task_toml(config: TaskConfig) -> str:
    # Python mode keeps TOML dates and times as such (JSON mode would turn them into strings).
    data = config.model_dump(mode="python", exclude_none=True, exclude_defaults=False)
    return tomli_w.dumps(_drop_empty(data))


def _drop_empty(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            value = _drop_empty(value)
            if not value:
                continue
        elif isinstance(value, list) and not value:
            continue
        out[key] = value
    return out


def save_task(task: Task, dest: Path | str) -> Task:
    """Write ``task`` to ``dest``: copy the source dir's files, then rewrite task.toml and instruction."""
    dest_paths = TaskPaths(Path(dest).resolve())
    if dest_paths.root != task.paths.root and task.paths.root.is_dir():
        if dest_paths.root.is_relative_to(task.paths.root):
            raise TaskFormatError(f"{dest_paths.root}: cannot save a task inside its own directory")
        shutil.copytree(task.paths.root, dest_paths.root, dirs_exist_ok=True)
    # A task built in memory has no source dir to copy from.
    dest_paths.root.mkdir(parents=True, exist_ok=True)
    dest_paths.config.write_text(dump_task_toml(task.config), encoding="utf-8")
    dest_paths.instruction.write_text(task.instruction, encoding="utf-8")
    return Task(paths=dest_paths, config=task.config, instruction=task.instruction)


_IGNORED_NAMES = {"__pycache__", ".DS_Store", ".git"}


def iter_task_files(root: Path) -> list[Path]:
    """Files of a task dir in a stable order, skipping caches."""
    files = [
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part in _IGNORED_NAMES for part in p.relative_to(root).parts)
    ]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def task_content_hash(root: Path) -> str:
    h = hashlib.sha256()
    for path in iter_task_files(root):
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes().replace(b"\r\n", b"\n")
        h.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def find_task_dirs(paths: list[Path]) -> list[Path]:
    """Expand each path: a task dir (has task.toml) as is, otherwise every task dir below it, sorted."""
    found: list[Path] = []
    for p in paths:
        p = p.resolve()
        if not p.exists():
            raise TaskFormatError(f"{p}: no such file or directory")
        if p.is_file() and p.name == "task.toml":
            p = p.parent
        if (p / "task.toml").is_file():
            found.append(p)
            continue
        below = sorted(t.parent for t in p.rglob("task.toml") if t.is_file())
        # A task may itself contain a task.toml (e.g. in its environment): that one is data, not a task.
        below = [t for t in below if not any(t != o and t.is_relative_to(o) for o in below)]
        if not below:
            raise TaskFormatError(f"{p}: no task.toml here or below")
        found += below
    seen: set[Path] = set()
    unique: list[Path] = []
    for t in found:
        if t not in seen:
            seen.add(t)
            unique.append(t)
    return unique
