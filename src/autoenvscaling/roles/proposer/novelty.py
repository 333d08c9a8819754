"""Is a proposed task new, or (nearly) a copy of a task the proposer was shown?

The workshop's draft starts as a copy of the template or an example, and both already pass validation: a
proposer that submits it unchanged must not count as a valid *new* environment. Nor may one that rewrites
only the instruction: the validator cannot tell that the old tests no longer match the new words, so the
grading side (the solution and the test files) must be new as well. ``tests/test.sh`` is left out of that
comparison because the domain guides prescribe it verbatim.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from autoenvscaling.tasks.model import iter_task_files

DUPLICATE_CHECK = "duplicate-of-example"
DUPLICATE_IN_RUN = "duplicate-in-run"  # nearly the same as a candidate accepted earlier in the same run
DEFAULT_THRESHOLD = 0.8
_WORD = re.compile(r"\w+")
_BOILERPLATE = frozenset({"tests/test.sh"})


class NoveltyResult(BaseModel):
    duplicate_of: str | None = None  # the reference task's dir name
    instruction_similarity: float = 0.0  # against the closest reference
    grading_similarity: float = 0.0  # solution + tests, against the closest reference

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


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def instruction_text(task_dir: Path) -> str:
    return _read(task_dir / "instruction.md")


def _harness_test_code() -> str:
    from importlib import resources

    return resources.files("autoenvscaling.roles.proposer.staged").joinpath("grading.py").read_text(encoding="utf-8")


def grading_text(task_dir: Path) -> str:
    """The solution and the test files, in a stable order; test.sh and the staged proposer's generic
    comparison code are left out (every task shares them), the recorded outputs stay in."""
    parts = []
    harness = _harness_test_code()
    for sub in ("solution", "tests"):
        root = task_dir / sub
        if root.is_dir():
            for f in iter_task_files(root):
                rel = f"{sub}/{f.relative_to(root).as_posix()}"
                text = _read(f)
                if rel not in _BOILERPLATE and text != harness:
                    parts.append(text)
    return "\n".join(parts)


def check_novelty(task_dir: Path, references: list[Path], threshold: float = DEFAULT_THRESHOLD) -> NoveltyResult:
    """A copy when its instruction, or its solution and tests, match a reference at ``threshold`` or more."""
    mine_i, mine_g = instruction_text(task_dir), grading_text(task_dir)
    scored = [
        (similarity(mine_i, instruction_text(ref)), similarity(mine_g, grading_text(ref)), ref.name)
        for ref in references
    ]
    if not scored:
        return NoveltyResult()
    si, sg, name = max(scored, key=lambda t: max(t[0], t[1]))
    return NoveltyResult(
        duplicate_of=name if max(si, sg) >= threshold else None, instruction_similarity=si, grading_similarity=sg
    )
