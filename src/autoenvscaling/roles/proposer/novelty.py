"""Is a proposed task new, or (nearly) a copy of a task the proposer was shown?

The workshop's draft starts as a copy of the template or an example, and both already pass validation: a
proposer that submits it unchanged must not count as a valid *new* environment. The instruction is the
task's identity, so two tasks whose instructions share most word trigrams are the same task.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

DUPLICATE_CHECK = "duplicate-of-example"
DEFAULT_THRESHOLD = 0.8
_WORD = re.compile(r"\w+")


class NoveltyResult(BaseModel):
    duplicate_of: str | None = None  # the reference task's dir name
    similarity: float = 0.0  # the highest instruction similarity seen

    @property
    def is_new(self) -> bool:
        return self.duplicate_of is None


def _shingles(text: str, n: int = 3) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of word trigrams (1.0 for identical texts, 0.0 for disjoint ones)."""
    sa, sb = _shingles(a), _shingles(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def _instruction(task_dir: Path) -> str:
    path = task_dir / "instruction.md"
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def check_novelty(task_dir: Path, references: list[Path], threshold: float = DEFAULT_THRESHOLD) -> NoveltyResult:
    """Compare ``task_dir``'s instruction with each reference's; the closest one at or above ``threshold`` wins."""
    mine = _instruction(task_dir)
    scored = [(similarity(mine, _instruction(ref)), ref.name) for ref in references]
    if not scored:
        return NoveltyResult()
    score, name = max(scored)
    return NoveltyResult(duplicate_of=name if score >= threshold else None, similarity=score)
