"""Copying a directory out of a container never creates links that point outside the destination."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from autoenvscaling.sandbox.archive import unpack_dir


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    buf.seek(0)
    return buf


def test_absolute_and_escaping_links_are_skipped(tmp_path: Path) -> None:
    top = tarfile.TarInfo("verifier")
    top.type = tarfile.DIRTYPE
    ok = tarfile.TarInfo("verifier/reward.txt")
    ok.size = 1
    abs_link = tarfile.TarInfo("verifier/passwd")
    abs_link.type, abs_link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    up_link = tarfile.TarInfo("verifier/up")
    up_link.type, up_link.linkname = tarfile.SYMTYPE, "../../secret"
    dev = tarfile.TarInfo("verifier/null")
    dev.type = tarfile.CHRTYPE
    archive = _tar([(top, None), (ok, b"1"), (abs_link, None), (up_link, None), (dev, None)])
    unpack_dir(archive, "verifier", tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["reward.txt"]
    assert (tmp_path / "out" / "reward.txt").read_text() == "1"
