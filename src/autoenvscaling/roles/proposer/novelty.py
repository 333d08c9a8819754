"""Is a proposed task new, or (nearly) a copy of a task the proposer was shown?

The workshop's draft starts as a copy of the template or an example, and both already pass validation: a
proposer that submits it unchanged must not count as a valid *new* environment. Nor may one that rewrites
only the instruction: the validator cannot tell that the old tests no longer match the new words, so the
grading side (the solution and the test files) must be new as well. ``tests/test.sh`` is left out of that
comparison because the domain guides prescribe it verbatim.

Word similarity misses the copy that small tasks make most: the same answer to the same data under other
words and another output name (yield series v20 A1 #0 and #1: "status code less than 400" twice, written to
``status_codes_below_400.txt`` and ``status_codes_less_than_400.txt``). A task with recorded outputs has an
``answer_key``; two tasks with the same key are copies, whatever their texts: rules that the data cannot tell
apart are one task to a solver, which passes either with the other's rule.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
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
    same_answer: bool = False  # the same recorded outputs of the same environment files (``answer_key``)

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


@lru_cache(maxsize=1)
def harness_test_code() -> str:
    """The staged proposer's output grader, which every staged environment holds as ``tests/test_outputs.py``."""
    from importlib import resources

    return resources.files("autoenvscaling.roles.proposer.staged").joinpath("grading.py").read_text(encoding="utf-8")


def grading_text(task_dir: Path) -> str:
    """The solution and the test files, in a stable order; test.sh and the staged proposer's generic
    comparison code are left out (every task shares them), the recorded outputs stay in."""
    parts = []
    harness = harness_test_code()
    for sub in ("solution", "tests"):
        root = task_dir / sub
        if root.is_dir():
            for f in iter_task_files(root):
                rel = f"{sub}/{f.relative_to(root).as_posix()}"
                text = _read(f)
                if rel not in _BOILERPLATE and text != harness:
                    parts.append(text)
    return "\n".join(parts)


def answer_key(task_dir: Path) -> str | None:
    """What a task with recorded outputs (``tests/expected/``) asks for, whatever its words: a digest of its
    expected outputs (each file's lines without trailing blanks, the files in sorted order, their names left
    out) and of the paths of its environment's files. The data's contents are left out: a child that appends
    lines its rule does not keep asks for the same answer (v20 A1 #1 added four lines of status 404 and 500 to
    a "less than 400" filter). None without recorded outputs, or when they are under 16 characters in all (a
    count: two rules can share it by chance)."""
    expected = task_dir / "tests" / "expected"
    if not expected.is_dir():
        return None
    outputs = sorted(_lines(_read(f)) for f in iter_task_files(expected))
    if sum(len(o) for o in outputs) < 16:
        return None
    env = task_dir / "environment"
    paths = sorted(f.relative_to(env).as_posix() for f in iter_task_files(env)) if env.is_dir() else []
    digest = hashlib.sha256()
    for part in [*outputs, "\x00", *paths]:
        digest.update(part.encode("utf-8", "replace") + b"\x00")
    return digest.hexdigest()


def _lines(text: str) -> str:
    return "\n".join(ln.rstrip() for ln in text.strip().splitlines())


def check_novelty(task_dir: Path, references: list[Path], threshold: float = DEFAULT_THRESHOLD) -> NoveltyResult:
    """A copy when its instruction, or its solution and tests, match a reference at ``threshold`` or more, or
    when it has the same ``answer_key`` as a reference."""
    key = answer_key(task_dir)
    if key is not None:
        for ref in references:
            if answer_key(ref) == key:
                return NoveltyResult(
                    duplicate_of=ref.name,
                    instruction_similarity=similarity(instruction_text(task_dir), instruction_text(ref)),
                    grading_similarity=similarity(grading_text(task_dir), grading_text(ref)),
                    same_answer=True,
                )
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
