"""Host-side confinement of what a trial copies out of its sandbox.

Everything a task declares is untrusted: an ``artifacts`` entry decides a host path, and ``/logs/agent`` is
whatever the image put there. Artifacts land strictly inside the trial's ``artifacts/`` dir; files from
``/logs/agent`` never replace a file the harness wrote (the trajectory of a solved trial is training data).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from autoenvscaling.errors import UserInputError
from autoenvscaling.tasks.config import artifact_path_problem

HARNESS_FILES = frozenset({"trajectory.json"})  # written by the harness only, whatever the container holds


def artifact_dest(artifacts_dir: Path, artifact: str) -> Path:
    """The host path for ``artifact``: inside ``artifacts_dir`` after resolving every link, else an error."""
    problem = artifact_path_problem(artifact)
    if problem is not None:
        raise UserInputError(f"artifacts: {problem}")
    base = artifacts_dir.resolve()
    dest = (base / artifact.lstrip("/")).resolve()
    if dest == base or not dest.is_relative_to(base):
        raise UserInputError(f"artifacts: {artifact!r} resolves outside the trial's artifacts dir")
    return dest


def merge_untrusted(src: Path, dst: Path) -> list[str]:
    """Move what was copied out of a container (``src``) into ``dst`` without replacing anything there.

    Links are dropped, and so are the harness's own file names; returns the relative paths left out."""
    skipped: list[str] = []
    dst.mkdir(parents=True, exist_ok=True)
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        target = dst / rel
        if path.is_symlink() or (len(rel.parts) == 1 and rel.name in HARNESS_FILES):
            skipped.append(rel.as_posix())
            continue
        if path.is_dir():
            if not target.is_symlink():
                target.mkdir(exist_ok=True)
            continue
        if os.path.lexists(target) or not target.parent.resolve().is_relative_to(dst.resolve()):
            skipped.append(rel.as_posix())
            continue
        os.replace(path, target)
    shutil.rmtree(src, ignore_errors=True)
    return skipped
