"""Small downloads through the open shell (a tar as base64), and every case that must fall back to the engine's
archive API: a symlink, an unreadable file, an archive over the cap. The shell's output is the container's word,
so a forged archive is filtered like the engine's."""

from __future__ import annotations

import base64
import io
import tarfile
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.sandbox.docker import DockerSandbox
from autoenvscaling.sandbox.docker_sandbox import FAST_COPY_BYTES

pytestmark = pytest.mark.docker


def _count_archive_calls(sb: DockerSandbox, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = sb._api.get_archive

    def spy(container: str, path: str) -> Any:
        calls.append(path)
        return real(container, path)

    monkeypatch.setattr(sb._api, "get_archive", spy)
    return calls


def test_a_small_dir_and_file_come_out_through_the_shell(
    sandbox: DockerSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox.exec("mkdir -p /logs/agent/sub && printf 'a\\n' > /logs/agent/one.txt && printf 'b' > /logs/agent/sub/two")
    sandbox.exec("chmod 755 /logs/agent/one.txt && ln -s one.txt /logs/agent/link")
    calls = _count_archive_calls(sandbox, monkeypatch)
    sandbox.download("/logs/agent", tmp_path / "agent")
    sandbox.download("/logs/agent/one.txt", tmp_path / "copy.txt")
    sandbox.download("/logs/agent/one.txt", tmp_path)  # into a dir: under its own name
    assert calls == []
    assert (tmp_path / "agent" / "one.txt").read_text() == "a\n" and (
        tmp_path / "agent" / "sub" / "two"
    ).read_text() == "b"
    assert (tmp_path / "agent" / "link").is_symlink() and (tmp_path / "agent" / "link").read_text() == "a\n"
    assert (tmp_path / "copy.txt").read_text() == "a\n" and (tmp_path / "one.txt").stat().st_mode & 0o777 == 0o755


def test_a_symlink_an_unreadable_file_and_a_large_file_fall_back_to_the_archive_api(
    sandbox: DockerSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = FAST_COPY_BYTES + 4096
    sandbox.exec(f"mkdir -p /data && head -c {big} /dev/urandom > /data/big.bin && ln -s /data /data-link")
    sandbox.exec("mkdir -p /secret && echo s > /secret/key && chmod 000 /secret/key && chown root /secret/key")
    calls = _count_archive_calls(sandbox, monkeypatch)
    sandbox.download("/data/big.bin", tmp_path / "big.bin")
    sandbox.download("/data-link", tmp_path / "linked")
    assert calls == ["/data/big.bin", "/data-link", "/data"]  # the link followed by the archive API, as before
    assert (tmp_path / "big.bin").stat().st_size == big and (tmp_path / "linked" / "big.bin").stat().st_size == big
    user = sandbox.exec("id -u").stdout.strip()
    sandbox.download("/secret", tmp_path / "secret")
    assert (tmp_path / "secret" / "key").read_text() == "s\n"
    assert calls[3:] == ([] if user == "0" else ["/secret"])  # root reads it anyway; another user cannot


def test_a_forged_archive_on_the_shell_lands_nothing_outside_the_destination(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    forged = io.BytesIO()
    with tarfile.open(fileobj=forged, mode="w") as tar:
        for name, kind in (("agent/", tarfile.DIRTYPE), ("agent/ok.txt", tarfile.REGTYPE),
                           ("agent/../../escaped.txt", tarfile.REGTYPE), ("agent/abs", tarfile.SYMTYPE)):  # fmt: skip
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else ""
            data = b"x\n" if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    payload = base64.b64encode(forged.getvalue()).decode()
    # A `tar` first on PATH that prints the forged archive whatever it is asked for.
    sandbox.exec("mkdir -p /logs/agent && mkdir -p /usr/local/bin")
    sandbox.exec(
        f"printf '#!/bin/sh\\necho {payload} | base64 -d\\n' > /usr/local/bin/tar && chmod 755 /usr/local/bin/tar"
    )
    dst = tmp_path / "out" / "agent"
    sandbox.download("/logs/agent", dst)
    assert (dst / "ok.txt").read_text() == "x\n"
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "out" / "escaped.txt").exists()
    assert not (dst / "abs").exists()
