"""Finding 5: what comes out of a container is streamed with a cap and stops there, as an error naming the path."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox import archive
from autoenvscaling.sandbox.base import CopyOutLimitError, SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend


def test_spool_stops_at_the_cap() -> None:
    pulled = 0

    def endless() -> object:
        nonlocal pulled
        while True:
            pulled += 1
            yield b"\0" * 65536

    with pytest.raises(CopyOutLimitError, match="/logs/agent/x"):
        archive.spool(endless(), 1024 * 1024, what="sb:/logs/agent/x")  # type: ignore[arg-type]
    assert pulled <= 17  # nothing read (or written) much past the cap
    with archive.spool(iter([b"ab", b"cd"]), 4) as f:
        assert f.read() == b"abcd"


@pytest.mark.docker
def test_huge_sparse_file_is_refused_quickly(docker_backend: DockerBackend, tmp_path: Path) -> None:
    with docker_backend.create(SandboxSpec(image=BASE_IMAGE, copy_out_mb=1)) as sb:
        sb.exec("mkdir -p /logs/agent && truncate -s 100G /logs/agent/x")
        t0 = time.monotonic()
        with pytest.raises(CopyOutLimitError, match="/logs/agent"):
            sb.download("/logs/agent", tmp_path / "agent")
        assert time.monotonic() - t0 < 10
    assert sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file()) == 0
