"""Harbor datasets: a dir of task dirs, optionally with a ``dataset.toml`` manifest (Harbor 0.26's registry format).

The manifest, as Harbor reads and writes it::

    [dataset]
    name = "org/name"          # org/name, as task names
    version = "1.0"            # optional
    description = ""
    keywords = []

    [[tasks]]
    name = "org/task-a"
    digest = "sha256:<64 hex>" # the task's content digest (``task_digest``)

The task digest follows Harbor's packager: SHA-256 over ``"<relative posix path>\\0<sha256 of the file>\\n"`` for
each published file in path order. Published files are ``task.toml``, ``instruction.md``, ``README.md`` and
``trajectory.json`` at the top, and every file under ``environment/``, ``tests/``, ``solution/`` and ``steps/``,
less Harbor's default ignores (``__pycache__/``, ``*.pyc``, ``.DS_Store``, editor swap and backup files) and
``.harborignore`` files. The rules in a task's own ``.gitignore`` or ``.harborignore`` are not applied, so such a
task's digest can differ from Harbor's (generated tasks carry neither).
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
import tomllib
from pathlib import Path

import tomli_w
from pydantic import BaseModel, Field, ValidationError, field_validator

from autoenvscaling.tasks.errors import TaskFormatError
from autoenvscaling.tasks.model import find_task_dirs
from autoenvscaling.tasks.names import slug

MANIFEST_FILENAME = "dataset.toml"
_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$")
_DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")
_TOP_FILES = ("task.toml", "instruction.md", "README.md", "trajectory.json")
_TREES = ("environment", "tests", "solution", "steps")
_IGNORED_NAMES = ("*.pyc", ".DS_Store", "*.swp", "*.swo", "*~", ".harborignore")


def _org_name(value: str) -> str:
    if not _NAME.match(value) or ".." in value:
        raise ValueError(f"expected 'org/name' (letters, digits, '.', '_', '-'), got {value!r}")
    return value


class DatasetTaskRef(BaseModel):
    name: str
    digest: str

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return _org_name(v)

    @field_validator("digest")
    @classmethod
    def _digest(cls, v: str) -> str:
        if not _DIGEST.match(v):
            raise ValueError(f"expected 'sha256:<64 hex>', got {v!r}")
        return v


class DatasetInfo(BaseModel):
    name: str
    version: str | None = None
    description: str = ""
    keywords: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return _org_name(v)


class HarborDatasetManifest(BaseModel):
    """``dataset.toml``. Harbor's ``[[files]]`` (dataset-level files such as ``metric.py``) are read and kept."""

    schema_version: str = "1.0"
    dataset: DatasetInfo
    tasks: list[DatasetTaskRef] = Field(default_factory=list)
    files: list[dict[str, str]] = Field(default_factory=list)

    def to_toml(self) -> str:
        """Harbor's order: ``[dataset]``, then ``[[tasks]]``, then ``[[files]]``."""
        data = self.model_dump(mode="json", exclude_none=True, exclude={"schema_version"})
        if not data["files"]:
            del data["files"]
        return tomli_w.dumps(data)


def read_manifest(path: Path) -> HarborDatasetManifest:
    try:
        return HarborDatasetManifest.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise TaskFormatError(f"{path}: unreadable: {e}") from e
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise TaskFormatError(f"{path}: {where}: {first['msg']}") from e


def _ignored(rel: Path) -> bool:
    return "__pycache__" in rel.parts or any(fnmatch.fnmatch(rel.name, p) for p in _IGNORED_NAMES)


def published_files(task_dir: Path) -> list[Path]:
    """The files Harbor's packager publishes (and hashes) for a task dir, sorted by relative posix path."""
    root = task_dir.resolve()
    files = [root / name for name in _TOP_FILES if (root / name).is_file()]
    for tree in _TREES:
        top = root / tree
        if top.is_dir() and not top.is_symlink():
            files += [p for p in _walk(top) if p.is_file()]
    files = [f for f in files if not _ignored(f.relative_to(root))]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _walk(directory: Path) -> list[Path]:
    """Every entry below ``directory``, not descending into linked dirs (as Harbor's file selection)."""
    out: list[Path] = []
    for p in sorted(directory.iterdir()):
        out.append(p)
        if p.is_dir() and not p.is_symlink():
            out += _walk(p)
    return out


def task_digest(task_dir: Path) -> str:
    """``sha256:<hex>``: Harbor's content digest of a task dir (see the module docstring)."""
    root = task_dir.resolve()
    outer = hashlib.sha256()
    for f in published_files(root):
        inner = hashlib.sha256(f.read_bytes()).hexdigest()
        outer.update(f"{f.relative_to(root).as_posix()}\0{inner}\n".encode())
    return f"sha256:{outer.hexdigest()}"


def task_ref_name(task_dir: Path, org: str) -> str:
    """The task's ``[task] name`` when it is ``org/name``, else ``<org>/<dir name>``."""
    try:
        raw = tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        raw = {}
    section = raw.get("task")
    name = section.get("name") if isinstance(section, dict) else None
    if isinstance(name, str) and _NAME.match(name) and ".." not in name:
        return name
    return f"{org}/{slug(task_dir.name)}"


def dataset_task_dirs(path: Path) -> list[Path]:
    """The task dirs of a Harbor dataset dir, in order.

    With a ``dataset.toml``: its tasks, each found among the dir's task dirs by ``[task] name`` or by dir name
    (the part after ``org/``); a task listed there and not present is an error (we never download). Without one:
    every task dir in or below ``path`` (``path`` may be a single task dir). Errors are one line each.
    """
    path = Path(path)
    if not path.exists():
        raise TaskFormatError(f"{path}: no such directory")
    if not path.is_dir():
        raise TaskFormatError(f"{path}: not a directory (expected a dataset dir of task dirs)")
    manifest_path = path / MANIFEST_FILENAME
    if (path / "task.toml").is_file() or not manifest_path.is_file():
        try:
            return find_task_dirs([path])
        except TaskFormatError:
            raise TaskFormatError(f"{path}: no task dirs here (no task.toml in it or below)") from None
    manifest = read_manifest(manifest_path)
    if not manifest.tasks:
        raise TaskFormatError(f"{manifest_path}: lists no [[tasks]]")
    local: dict[str, Path] = {}
    for child in sorted(p for p in path.iterdir() if (p / "task.toml").is_file()):
        local.setdefault(task_ref_name(child, "\0"), child)  # a real [task] name never holds \0
        local.setdefault(child.name, child)
    found: list[Path] = []
    for ref in manifest.tasks:
        hit = local.get(ref.name) or local.get(ref.name.split("/", 1)[1])
        if hit is None:
            raise TaskFormatError(f"{manifest_path}: task {ref.name} is not in {path} (remote tasks are not fetched)")
        if hit not in found:
            found.append(hit)
    return found
