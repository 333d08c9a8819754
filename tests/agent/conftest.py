"""Fixtures for the agent tests: a sandbox that runs commands with subprocess in a temporary directory."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Self

import pytest

from autoenvscaling.sandbox.base import DEFAULT_OUTPUT_LIMIT, ExecResult


class LocalSandbox:
    """Implements the ``Sandbox`` protocol on the host, in ``root`` (a test double, not a sandbox).

    Each command runs in a fresh ``bash -c`` in its own session, like the docker backend, so a timeout kills
    the command's whole process group and the next command runs normally.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def id(self) -> str:
        return f"local:{self.root.name}"

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)

    def exec(
        self,
        cmd: str,
        *,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        user: str | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> ExecResult:
        started = time.monotonic()
        proc = subprocess.Popen(
            ["bash", "-c", cmd],
            cwd=self._path(cwd) if cwd else self.root,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
            code, timed_out = proc.returncode, False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            code, timed_out = 124, True
        truncated = len(out) > output_limit or len(err) > output_limit
        return ExecResult(
            stdout=out[:output_limit],
            stderr=err[:output_limit],
            exit_code=code,
            duration_sec=time.monotonic() - started,
            timed_out=timed_out,
            truncated=truncated,
        )

    def _path(self, p: str) -> Path:
        return self.root / p.lstrip("/")

    def upload(self, src: Path, dst: str) -> None:
        target = self._path(dst)
        if src.is_dir():
            shutil.copytree(src, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)

    def upload_text(self, content: str | bytes, dst: str, mode: int = 0o644) -> None:
        target = self._path(dst)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)
        target.chmod(mode)

    def download(self, src: str, dst: Path) -> None:
        source = self._path(src)
        if source.is_dir():
            shutil.copytree(source, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(source, dst)

    def stop(self) -> None:
        pass

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[LocalSandbox]:
    with LocalSandbox(tmp_path / "box") as sb:
        yield sb
