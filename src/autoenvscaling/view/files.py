"""The served root: every path from a URL is resolved and must stay inside it; files are read in pages.

Records store absolute paths from the machine and the moment they were written (``/tmp/x/run-1/trials/...``);
``Root.locate`` finds such a path under the served root even after the run dir was moved or copied, by
re-anchoring it at the run dir's name.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from pydantic import BaseModel

PAGE_BYTES = 64 * 1024  # one page of a log
PREVIEW_BYTES = 16 * 1024  # what a trial or environment page shows inline before "more"


class OutsideRoot(LookupError):
    """A requested path does not exist inside the served root (or tries to leave it)."""


class Page(BaseModel):
    text: str
    offset: int
    end: int
    size: int  # the whole file's size in bytes
    next_offset: int | None  # None: this page reaches the end
    prev_offset: int | None
    binary: bool = False


def read_page(path: Path, offset: int = 0, limit: int = PAGE_BYTES) -> Page:
    """``limit`` bytes from ``offset`` (never the whole file); a cut UTF-8 sequence is replaced, not fatal."""
    size = path.stat().st_size
    offset = max(0, min(offset, size))
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read(limit)
    end = offset + len(data)
    return Page(
        text=data.decode("utf-8", errors="replace"),
        offset=offset,
        end=end,
        size=size,
        next_offset=end if end < size else None,
        prev_offset=max(0, offset - limit) if offset > 0 else None,
        binary=b"\0" in data[:4096],
    )


def read_text(path: Path, limit: int = PREVIEW_BYTES) -> str | None:
    """The start of a small text file, or None when it is missing or unreadable."""
    try:
        page = read_page(path, 0, limit)
    except OSError:
        return None
    return page.text + ("\n[... cut: the whole file is on its own page]" if page.next_offset is not None else "")


class Root:
    """The directory the viewer serves. Nothing outside it is ever read on behalf of a URL."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()

    def resolve(self, rel: str) -> Path:
        """The existing path ``rel`` names inside the root (symlinks followed); else ``OutsideRoot``."""
        if "\0" in rel or PurePosixPath(rel).is_absolute():
            raise OutsideRoot(rel)
        target = (self.path / rel).resolve()
        if not target.is_relative_to(self.path) or not target.exists():
            raise OutsideRoot(rel)
        return target

    def rel(self, path: Path) -> str:
        """``path`` (inside the root) relative to it, as used in URLs; the root itself is ``.``."""
        r = path.resolve().relative_to(self.path).as_posix()
        return r or "."

    def inside(self, path: Path) -> bool:
        try:
            return path.resolve().is_relative_to(self.path) and path.exists()
        except OSError:
            return False

    def locate(self, recorded: str | None, anchor: Path | None = None) -> Path | None:
        """Where the recorded absolute path lies under the root now, or None. ``anchor`` is the run dir the record
        belongs to: a path that named the same dir elsewhere (same name) is re-anchored there."""
        if not recorded:
            return None
        p = Path(recorded)
        if self.inside(p):
            return p.resolve()
        for base in [a for a in (anchor, self.path) if a is not None]:
            parts = p.parts
            if base.name in parts:
                i = len(parts) - 1 - parts[::-1].index(base.name)
                moved = base.joinpath(*parts[i + 1 :])
                if self.inside(moved):
                    return moved.resolve()
        return None

    def link(self, recorded: str | None, anchor: Path | None = None) -> str | None:
        """``locate`` as a root-relative path for a URL, or None."""
        found = self.locate(recorded, anchor)
        return self.rel(found) if found is not None else None


def mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
