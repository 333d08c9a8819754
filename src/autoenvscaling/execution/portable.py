"""Work that runs where the driver's disk is not: inputs travel packed, outputs come back for the driver.

The driver wraps its work in ``PortableWork`` and sends ``Shipment``s. On the worker, the input dir is unpacked
in a scratch dir under its own name, the work writes its output into a scratch copy of the output dir, and the
result comes back as JSON with every scratch path turned into the driver's path (in the output's ``*.json`` files
too), plus the output's files.
``Delivery.land`` (on the driver) writes the output's files into the run dir and validates the record. So the driver
stays the only writer of the run dir whether or not the nodes share a filesystem.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

R = TypeVar("R", bound=BaseModel)


# One entry per file, dir or symlink under the packed dir: (relative path, kind, mode, content or link target).
Entry = tuple[str, str, int, bytes]
Packed = tuple[Entry, ...]


def pack_dir(path: Path) -> Packed:
    """``path``'s contents as entries (symlinks kept as links, never followed). Cheaper than tar by ~10x."""
    entries: list[Entry] = []
    if not path.is_dir():
        return ()
    for top, dirs, files in os.walk(path):
        rel_top = os.path.relpath(top, path)
        for name in sorted(dirs):
            full = os.path.join(top, name)
            rel = os.path.normpath(os.path.join(rel_top, name))
            if os.path.islink(full):
                entries.append((rel, "l", 0, os.readlink(full).encode()))
            else:
                entries.append((rel, "d", os.lstat(full).st_mode & 0o777, b""))
        for name in sorted(files):
            full = os.path.join(top, name)
            rel = os.path.normpath(os.path.join(rel_top, name))
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                entries.append((rel, "l", 0, os.readlink(full).encode()))
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as f:
                    entries.append((rel, "f", st.st_mode & 0o777, f.read()))
    return tuple(entries)


def _inside(rel: str) -> bool:
    return bool(rel) and not rel.startswith("/") and ".." not in rel.split("/")


def _safe_parent(dest: str, rel: str, safe: set[str]) -> bool:
    """No directory between ``dest`` and ``rel`` is a symlink (``safe``: directories already checked)."""
    parent = rel.rpartition("/")[0]
    todo: list[str] = []
    while parent and parent not in safe:
        todo.append(parent)
        parent = parent.rpartition("/")[0]
    if any(os.path.islink(os.path.join(dest, d)) for d in todo):
        return False
    safe.update(todo)
    return True


def unpack_dir(packed: Packed, dest: Path) -> None:
    """Write ``pack_dir``'s entries under ``dest`` (merged with what is there). Nothing lands outside ``dest``:
    a path with ``..`` or an absolute one is refused, a link that points out of ``dest`` is left out, and no
    write goes through a link. (String paths and one open per file: the driver runs this once per trial.)"""
    dest.mkdir(parents=True, exist_ok=True)
    root = str(dest)
    safe: set[str] = set()
    for rel, kind, mode, data in packed:
        if not _inside(rel):
            raise ValueError(f"packed entry {rel!r} leaves its directory")
        if not _safe_parent(root, rel, safe):
            raise ValueError(f"packed entry {rel!r} goes through a link")
        target = os.path.join(root, rel)
        if kind == "d":
            try:
                os.mkdir(target, mode | 0o700)
            except FileExistsError:
                if os.path.islink(target):
                    raise ValueError(f"packed entry {rel!r} goes through a link") from None
        elif kind == "f":
            _write_file(target, data, mode | 0o600)
        elif kind == "l":
            link = data.decode()
            if _inside(os.path.normpath(os.path.join(os.path.dirname(rel), link))):
                if os.path.lexists(target):
                    os.unlink(target)
                os.symlink(link, target)


def _write_file(target: str, data: bytes, mode: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
    try:
        fd = os.open(target, flags, mode)
    except OSError:  # a symlink (ELOOP) where the file goes: replace the link, never write through it
        if not os.path.islink(target):
            raise
        os.unlink(target)
        fd = os.open(target, flags, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _json_str(path: Path | str) -> str:
    """``path`` as it appears inside a JSON string (escapes included)."""
    return json.dumps(str(path))[1:-1]


def _moved(text: str, moves: list[tuple[Path, str]]) -> str:
    """``text`` (JSON) with each scratch path replaced by the driver's path it stands for."""
    for scratch, real in moves:
        text = text.replace(_json_str(scratch), _json_str(real))
    return text


@dataclass(frozen=True)
class Shipment:
    """One item on its way to a worker: its input dir (driver path + files) and the output dir it fills."""

    key: str
    input_dir: str
    input_files: Packed
    output_dir: str
    extra: str = ""  # a small item-specific argument (an attempt number, ...)


@dataclass(frozen=True)
class Delivery(Generic[R]):
    """A worker's result: the record (driver paths) and the output dir's files."""

    key: str
    record_json: str
    output_files: Packed
    output_dir: str

    def land(self, model: type[R]) -> R:
        """Write the output into the run dir (driver side) and return the record."""
        unpack_dir(self.output_files, Path(self.output_dir))
        return model.model_validate_json(self.record_json)


SCRATCH_PREFIX = "autoenv-work-"


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # no procfs: the signal said it exists
        return True
    return stat_line.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def sweep_scratch(tmp: str | None = None) -> list[Path]:
    """Remove the scratch dirs (``autoenv-work-<pid>-*``) whose worker process is gone: a worker killed mid-task
    (a Ray worker that died, a SIGKILL) cannot remove its own. Every task sweeps before it starts (one listing of
    the temp dir); returns what went."""
    root = tmp or tempfile.gettempdir()
    gone = []
    for path in Path(root).glob(f"{SCRATCH_PREFIX}*-*"):
        pid = path.name[len(SCRATCH_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not process_alive(int(pid)) and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
            gone.append(path)
    return gone


class PortableWork(Generic[R]):
    """Wraps ``fn(input_dir, output_dir, extra) -> record`` to run on ``Shipment``s in scratch dirs.

    ``fn`` must pickle (a module-level function or an object of importable classes) and must write nothing
    outside ``output_dir``.
    """

    def __init__(self, fn: Callable[[Path, Path, str], R]) -> None:
        self.fn = fn

    def __call__(self, job: Shipment) -> Delivery[R]:
        sweep_scratch()
        with tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-") as scratch:
            root = Path(scratch)
            input_dir = root / "in" / Path(job.input_dir).name
            output_dir = root / "out" / Path(job.output_dir).name
            unpack_dir(job.input_files, input_dir)
            output_dir.mkdir(parents=True)
            record = self.fn(input_dir, output_dir, job.extra)
            moves = [(input_dir, job.input_dir), (output_dir, job.output_dir)]
            for path in output_dir.rglob("*.json"):  # result.json records its task's and its own path
                if path.is_file() and not path.is_symlink():
                    path.write_text(_moved(path.read_text(encoding="utf-8"), moves), encoding="utf-8")
            text = _moved(record.model_dump_json(), moves)
            return Delivery(key=job.key, record_json=text, output_files=pack_dir(output_dir), output_dir=job.output_dir)


class Shipper:
    """Makes ``Shipment``s, packing each input dir once (a task's K attempts share one archive)."""

    def __init__(self) -> None:
        self._packed: dict[Path, Packed] = {}

    def __call__(self, key: str, input_dir: Path, output_dir: Path, extra: str = "") -> Shipment:
        packed = self._packed.get(input_dir)
        if packed is None:
            packed = self._packed[input_dir] = pack_dir(input_dir)
        return Shipment(key=key, input_dir=str(input_dir), input_files=packed, output_dir=str(output_dir), extra=extra)


def ship(key: str, input_dir: Path, output_dir: Path, extra: str = "") -> Shipment:
    return Shipper()(key, input_dir, output_dir, extra)
