"""Tar streams for copying files in and out of containers (``put_archive`` / ``get_archive``)."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from autoenvscaling.sandbox.base import CopyOutLimitError

_SPOOL_BYTES = 16 * 1024 * 1024  # archives larger than this spill to a temporary file


def _as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    # Like `docker cp`: what we copy in belongs to root, whoever owns it on the host.
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def pack_path(src: Path, arcname: str) -> IO[bytes]:
    """A tar of ``src`` named ``arcname``; for a directory, of its contents, under ``arcname/`` when given."""
    buf: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 - the caller owns it
    with tarfile.open(fileobj=buf, mode="w") as tar:
        if src.is_dir():
            children = sorted(src.iterdir())
            # No entry for the top directory itself unless it is empty: the engine creates missing parents
            # (0755), and an existing directory keeps its own mode and owner.
            if arcname and not children:
                tar.add(src, arcname=arcname, recursive=False, filter=_as_root)
            for child in children:
                name = f"{arcname}/{child.name}" if arcname else child.name
                tar.add(child, arcname=name, filter=_as_root)
        else:
            tar.add(src, arcname=arcname, filter=_as_root)
    buf.seek(0)
    return buf


def pack_bytes(content: bytes, arcname: str, mode: int) -> bytes:
    buf = io.BytesIO()
    info = _as_root(tarfile.TarInfo(arcname))
    info.size = len(content)
    info.mode = mode
    info.mtime = int(time.time())
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.addfile(info, io.BytesIO(content))
    return buf.getvalue()


def spool(chunks: Iterable[bytes], limit: int | None = None, what: str = "the archive") -> IO[bytes]:
    """Buffer a streamed archive, stopping as soon as it passes ``limit`` bytes (``CopyOutLimitError``).

    The check runs per chunk, before anything past the cap is written, so a container cannot fill the host's
    temp dir by offering a huge (or sparse) file."""
    buf: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 - the caller owns it
    total = 0
    try:
        for chunk in chunks:
            total += len(chunk)
            if limit is not None and total > limit:
                raise CopyOutLimitError(f"copying {what} out stopped: larger than the copy-out cap of {limit} bytes")
            buf.write(chunk)
    except BaseException:
        buf.close()
        close = getattr(chunks, "close", None)
        if callable(close):
            close()  # drops the engine's stream instead of draining it
        raise
    buf.seek(0)
    return buf


def _mine(info: tarfile.TarInfo) -> tarfile.TarInfo:
    # Files we take out of a container belong to whoever runs us, not to a uid of the container.
    return info.replace(uid=os.getuid(), gid=os.getgid(), uname="", gname="", deep=False)


def unpack_file(archive: IO[bytes], dst: Path) -> None:
    """Write the single regular file of ``archive`` to ``dst``."""
    with tarfile.open(fileobj=archive, mode="r|") as tar:
        for member in tar:
            if not member.isfile():
                continue
            reader = tar.extractfile(member)
            assert reader is not None  # a regular file always has a reader
            dst.parent.mkdir(parents=True, exist_ok=True)
            with dst.open("wb") as f:
                shutil.copyfileobj(reader, f)
            os.chmod(dst, member.mode & 0o777)
            return
    raise FileNotFoundError("the archive holds no regular file")


def unpack_dir(archive: IO[bytes], top: str, dst: Path) -> None:
    """Extract the directory ``top`` of ``archive`` so that its contents land in ``dst``."""
    prefix = top.rstrip("/") + "/"

    def strip(name: str) -> str | None:
        return name[len(prefix) :] if name.startswith(prefix) else None

    def member_filter(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
        name = strip(member.name)
        if not name:
            return None  # the top directory itself: dst stands in for it
        renamed = member.replace(name=name, deep=False)
        if member.islnk():  # hard links name their target by its path in the archive
            link = strip(member.linkname)
            if link is None:
                return None
            renamed = renamed.replace(linkname=link, deep=False)
        # What comes out of a container is untrusted: no absolute or escaping links, no device files,
        # nothing outside dst. Such members are skipped, not extracted.
        try:
            return tarfile.data_filter(_mine(renamed), path)
        except tarfile.FilterError:
            return None

    dst.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=archive, mode="r:") as tar:
        tar.extractall(dst, filter=member_filter)
