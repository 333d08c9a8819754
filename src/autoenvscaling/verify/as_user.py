"""The sandbox as an agent of another user sees it (``[agent].user``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Self

from autoenvscaling.sandbox.base import DEFAULT_OUTPUT_LIMIT, ExecResult, Sandbox


class AsUser:
    """The sandbox as the agent sees it: commands run as ``[agent].user`` unless they name a user."""

    def __init__(self, inner: Sandbox, user: str) -> None:
        self._inner = inner
        self._user = user

    @property
    def id(self) -> str:
        return self._inner.id

    def start(self) -> None:
        self._inner.start()

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
        return self._inner.exec(
            cmd, timeout=timeout, env=env, cwd=cwd, user=user or self._user, output_limit=output_limit
        )

    def upload(self, src: Path, dst: str) -> None:
        self._inner.upload(src, dst)

    def upload_text(self, content: str | bytes, dst: str, mode: int = 0o644) -> None:
        self._inner.upload_text(content, dst, mode)

    def download(self, src: str, dst: Path) -> None:
        self._inner.download(src, dst)

    def stop(self) -> None:
        self._inner.stop()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
