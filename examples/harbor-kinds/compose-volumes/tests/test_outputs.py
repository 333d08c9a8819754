"""/app/answer.txt holds the manifest's values; the fresh environment's volume and tmpfs mounts are checked too."""

from pathlib import Path

import pytest

EXPECTED = ["2024.3", "eu-west", "ops team"]  # a build arg, environment over env_file, env_file


def test_answer() -> None:
    out = Path("/app/answer.txt")
    assert out.is_file(), "no /app/answer.txt"
    assert out.read_text() == "".join(f"{line}\n" for line in EXPECTED)


def test_the_shared_volume() -> None:
    """The verifier's environment ran the writer again, into a volume of its own, mounted read-only here."""
    manifest = dict(line.split("=", 1) for line in Path("/shared/manifest.txt").read_text().splitlines())
    assert [manifest["release"], manifest["region"], manifest["owner"]] == EXPECTED
    assert manifest["writer_tmpfs"].startswith("tmpfs,") and "size=4096k" in manifest["writer_tmpfs"]
    with pytest.raises(OSError):
        Path("/shared/forged.txt").write_text("x")


def test_the_scratch_tmpfs() -> None:
    mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    (scratch,) = [m for m in mounts if m[1] == "/scratch"]
    assert scratch[2] == "tmpfs" and "size=8192k" in scratch[3]
