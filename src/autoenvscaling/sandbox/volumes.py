"""Mounts a sandbox makes for a task, and their caps: tmpfs sizes and the bytes its volumes hold.

A tmpfs holds its files in memory, and the kernel charges those pages to the container that writes them, so a
tmpfs can never hold more than the container's memory limit: that limit is also its size cap (``size`` larger
than it is lowered to it; no ``size`` means the cap), or ``DEFAULT_TMPFS_MB`` for a container without one.

A volume of the sandbox (docker's local driver) lies on the host's disk outside every container's writable layer,
where no storage quota reaches. Its size is what ``tree_bytes`` measures on the volume's directory, read from the
host; the sandbox counts it against ``storage_mb`` with its own container's writable layer (sandbox/storage.py).
"""

from __future__ import annotations

import os
import stat

import docker.types

from autoenvscaling.sandbox.base import TmpfsMount, VolumeMount

DEFAULT_TMPFS_MB = 1024  # the size cap of a tmpfs in a container without a memory limit
MB = 1024 * 1024


def tmpfs_options(mounts: list[TmpfsMount], memory_mb: int | None) -> dict[str, str]:
    """Docker's ``HostConfig.Tmpfs``: each path's ``size=`` (capped) and ``mode=``; no other option is passed."""
    cap = (memory_mb or DEFAULT_TMPFS_MB) * MB
    options: dict[str, str] = {}
    for m in mounts:
        size = min(m.size_bytes or cap, cap)
        options[m.target] = f"size={size}" + (f",mode={m.mode:o}" if m.mode is not None else "")
    return options


def volume_mounts(mounts: list[VolumeMount], names: dict[str, str]) -> list[docker.types.Mount]:
    """Engine mounts of the sandbox's volumes (``names``: a volume of the spec -> the engine's volume name)."""
    return [
        docker.types.Mount(m.target, names[m.volume], type="volume", read_only=m.read_only, no_copy=m.no_copy)
        for m in mounts
    ]


def tree_bytes(path: str) -> int:
    """The disk space a directory tree takes (``du -s``: allocated blocks, each inode once), 0 if it is gone.

    The tree is a container's to change while it is walked, so the walk goes by directory descriptors and never
    follows a symbolic link (``os.fwalk``), and stays on the tree's filesystem."""
    try:
        top = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return 0
    if not stat.S_ISDIR(top.st_mode):
        return 0
    total = top.st_blocks * 512
    seen: set[int] = set()
    for _, dirs, files, dir_fd in os.fwalk(path, follow_symlinks=False):
        keep: set[str] = set()
        for name in [*dirs, *files]:
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue  # removed meanwhile
            if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):
                if st.st_ino in seen:
                    continue
                seen.add(st.st_ino)
            total += st.st_blocks * 512
            if stat.S_ISDIR(st.st_mode) and st.st_dev == top.st_dev:
                keep.add(name)
        dirs[:] = [d for d in dirs if d in keep]
    return total
