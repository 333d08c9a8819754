"""Grades the permission audit of /srv/data: two listings and the o-w fix."""

import os
import stat
from pathlib import Path

WORLD_WRITABLE = [
    "/srv/data/alice/reports/q1.txt",
    "/srv/data/backup/nightly/db.dump",
    "/srv/data/backup/old/index.txt",
    "/srv/data/shared/run.sh",
    "/srv/data/shared/tmp/scratch",
]
BACKUP_LARGE = [
    "/srv/data/backup/nightly/db.dump",
    "/srv/data/backup/old/just-over.tar",
    "/srv/data/shared/big.iso",
]
# Expected permission bits of every entry after the fix (path -> mode, owner uid).
EXPECTED_MODES = {
    "/srv/data/alice/reports/q1.txt": (0o664, 1501),
    "/srv/data/alice/reports/q2.txt": (0o644, 1501),
    "/srv/data/alice/reports/raw.bin": (0o664, 1501),
    "/srv/data/backup/nightly/db.dump": (0o600, 34),
    "/srv/data/backup/nightly/exactly-1m.tar": (0o640, 34),
    "/srv/data/backup/old/just-over.tar": (0o600, 34),
    "/srv/data/backup/old/index.txt": (0o775, 34),
    "/srv/data/shared/run.sh": (0o4755, 0),
    "/srv/data/shared/tmp/scratch": (0o644, 1501),
    "/srv/data/shared/big.iso": (0o644, 34),
    "/srv/data/shared/tmp": (0o1777, 0),
}


def lines(path):
    return Path(path).read_text().splitlines()


def test_world_writable_listing():
    assert lines("/app/world_writable.txt") == WORLD_WRITABLE


def test_backup_large_listing():
    assert lines("/app/backup_large.txt") == BACKUP_LARGE


def test_permissions_after_fix():
    got = {}
    for path in EXPECTED_MODES:
        st = os.lstat(path)
        got[path] = (stat.S_IMODE(st.st_mode), st.st_uid)
    assert got == EXPECTED_MODES


def test_symlink_and_contents_kept():
    link = Path("/srv/data/shared/link-to-q1")
    assert link.is_symlink()
    assert os.readlink(link) == "/srv/data/alice/reports/q1.txt"
    assert Path("/srv/data/alice/reports/q1.txt").read_text() == "q1\n"
    assert Path("/srv/data/backup/old/just-over.tar").stat().st_size == 1048577
