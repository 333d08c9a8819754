"""``slug``: the one way a free-text name becomes a path component, an image tag part or a task name part."""

from __future__ import annotations

import re


def slug(text: str, *, lower: bool = False, keep: str = "._-", max_len: int | None = None) -> str:
    """``text`` with each run of characters other than ASCII letters, digits and ``keep`` turned into one ``-``,
    leading/trailing ``-``/``.`` stripped, cut to ``max_len``; ``task`` when nothing is left. ``lower`` first
    lower-cases it (Docker image names allow no capitals)."""
    if lower:
        text = text.lower()
    return re.sub(f"[^A-Za-z0-9{re.escape(keep)}]+", "-", text).strip("-.")[:max_len] or "task"
