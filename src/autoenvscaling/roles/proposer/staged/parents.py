"""Mutation starts: a staged episode changes a validated parent task instead of writing one from nothing.

Parents, in the order episodes take them (episode ``i`` takes parent ``i mod n``, in every arm alike):
environments accepted into the pool (newest first, passed in by the caller), the domain pack's worked example
(the guide's example as a task dir), then the domain's example tasks.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from autoenvscaling.roles.proposer.domain import DomainContext

WORKED_EXAMPLE = "worked-example"
_HEAD_LINES = 12
_HEAD_CHARS = 900
_MAX_DATA_BYTES = 64 * 1024


class Parent(BaseModel):
    """What a staged prompt shows of a parent, and what the harness needs of it."""

    name: str
    path: Path
    instruction: str
    solve_sh: str
    inputs: dict[str, str] = Field(default_factory=dict)  # data file name -> first lines
    data: dict[str, str] = Field(default_factory=dict)  # data file name -> full text (guards compare with it)

    @property
    def main_input(self) -> str | None:
        return next(iter(self.data), None)


def _head(text: str) -> str:
    lines = text.splitlines()
    head = "\n".join(lines[:_HEAD_LINES])[:_HEAD_CHARS]
    return head + (f"\n... ({len(lines)} lines in all)" if len(lines) > _HEAD_LINES else "")


def _text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) > _MAX_DATA_BYTES or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def load_parent(task_dir: Path) -> Parent | None:
    """A parent view of ``task_dir``, or None when it lacks an instruction, a solution or an environment."""
    instruction = _text(task_dir / "instruction.md")
    solve = _text(task_dir / "solution" / "solve.sh")
    if instruction is None or solve is None or not (task_dir / "environment" / "Dockerfile").is_file():
        return None
    data: dict[str, str] = {}
    data_dir = task_dir / "environment" / "data"
    if data_dir.is_dir():
        for f in sorted(data_dir.iterdir()):
            text = _text(f) if f.is_file() and not f.is_symlink() else None
            if text is not None:
                data[f.name] = text
    return Parent(
        name=task_dir.name,
        path=task_dir,
        instruction=instruction.strip(),
        solve_sh=solve.strip(),
        inputs={k: _head(v) for k, v in data.items()},
        data=data,
    )


def worked_example(domain: DomainContext) -> Path | None:
    """The domain pack's worked example dir, when the pack ships one."""
    from autoenvscaling.roles.proposer.packs import pack_dir

    path = pack_dir(domain.name) / WORKED_EXAMPLE
    return path if path.is_dir() else None


def parent_candidates(domain: DomainContext, pool_parents: list[Path] | None = None) -> list[Parent]:
    """Every usable parent, in the order episodes take them."""
    dirs = list(pool_parents or [])
    worked = worked_example(domain)
    if worked is not None:
        dirs.append(worked)
    dirs += domain.examples
    parents = [p for d in dirs if (p := load_parent(d)) is not None]
    return parents
