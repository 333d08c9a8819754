"""Files of the pool: task dirs are staged under ``tmp/`` and renamed into ``envs/<id>/`` inside the commit.

A crash leaves either a staged copy under ``tmp/`` (its name starts with the pid that made it) or a renamed dir
whose catalog row was never committed; ``clean_staging`` and the orphan sweep in ``Pool.open`` remove both.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path

_CACHES = shutil.ignore_patterns("__pycache__", ".DS_Store", ".git")


def _ignored(directory: str, names: list[str]) -> set[str]:
    """Caches, and every symbolic link: a link in a task dir would copy a host file into the pool and exports."""
    links = {n for n in names if os.path.islink(os.path.join(directory, n))}
    return set(_CACHES(directory, names)) | links


STALE_AFTER_SEC = 24 * 3600  # a staged copy this old is garbage even if its pid was reused


def stage_copy(src: Path, tmp_root: Path) -> Path:
    """Copy the task dir ``src`` to a fresh staging dir (symbolic links dropped, caches skipped)."""
    tmp_root.mkdir(parents=True, exist_ok=True)
    dest = tmp_root / f"{os.getpid()}-{uuid.uuid4().hex}"
    try:
        shutil.copytree(src, dest, ignore=_ignored)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return dest


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def clean_staging(tmp_root: Path) -> list[Path]:
    """Remove staged copies left by processes that died; returns what was removed."""
    if not tmp_root.is_dir():
        return []
    removed: list[Path] = []
    now = time.time()
    for entry in tmp_root.iterdir():
        pid_text = entry.name.split("-", 1)[0]
        # This process's own copies may belong to another thread copying right now.
        alive = pid_text.isdigit() and (int(pid_text) == os.getpid() or _pid_alive(int(pid_text)))
        try:
            stale = now - entry.lstat().st_mtime > STALE_AFTER_SEC
        except FileNotFoundError:
            continue
        if alive and not stale:
            continue
        _remove(entry)
        removed.append(entry)
    return removed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def remove_orphans(envs_dir: Path, known_ids: set[str]) -> list[Path]:
    """Remove env dirs without a catalog row. Call it holding the write lock, so no commit is half done."""
    if not envs_dir.is_dir():
        return []
    orphans = [p for p in envs_dir.iterdir() if p.name not in known_ids]
    for p in orphans:
        _remove(p)
    return orphans
