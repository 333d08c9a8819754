"""The files a proposed task's tests grade, as ``artifacts`` for a separate verifier.

A separate verifier runs the tests in a fresh container of the task's image holding only the declared artifacts,
so ``artifacts`` must name every file the solution writes that the tests read. A proposal may list them
(``outputs``); they are also inferred from its text: an absolute path the tests mention that the solution mentions
too (the path itself, a file under a directory it names, or a directory holding a file it names), unless the
image provides it (a COPY/ADD destination: an input the tests read must come from the image, not from what the
agent left, which could be a doctored copy) or it is a WORKDIR (``cd /app`` names no output).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from pathlib import PurePosixPath

from autoenvscaling.tasks.config import artifact_path_problem
from autoenvscaling.tasks.dockerfile import parse_instructions

MAX_OUTPUTS = 16
# Never an output: the harness's own dirs, and the system's (a copy of them would be meaningless or huge).
_PROTECTED = frozenset(
    {"logs", "tests", "solution", "proc", "sys", "dev", "bin", "sbin", "lib", "lib64", "usr", "boot"}
)
_PATH = re.compile(r"(?<![\w.$~/-])/(?:[A-Za-z0-9_.+-]+/)*[A-Za-z0-9_.+-]+")


def output_problem(path: str) -> str | None:
    """Why ``path`` cannot be an output, or None."""
    problem = artifact_path_problem(path)
    if problem is not None:
        return problem
    if path != str(PurePosixPath(path)):
        return f"{path!r} is not a normalized path"
    if PurePosixPath(path).parts[1] in _PROTECTED:
        return f"{path!r} is under a directory the harness or the system owns"
    return None


def mentioned_paths(texts: Iterable[str]) -> set[str]:
    """Absolute paths written out in ``texts`` (trailing punctuation dropped), usable as outputs."""
    found: set[str] = set()
    for text in texts:
        for m in _PATH.finditer(text):
            path = m.group(0).rstrip(".")
            if path and output_problem(path) is None:
                found.add(path)
    return found


def image_paths(dockerfile: str) -> tuple[set[str], set[str]]:
    """(inputs, workdirs): the absolute destinations of the Dockerfile's COPY/ADD, and its absolute WORKDIRs."""
    inputs: set[str] = set()
    workdirs: set[str] = set()
    for ins in parse_instructions(dockerfile):
        try:
            words = [w for w in shlex.split(ins.args) if not w.startswith("--")]
        except ValueError:
            continue
        if ins.keyword in ("COPY", "ADD") and len(words) >= 2 and words[-1].startswith("/"):
            inputs.add(str(PurePosixPath(words[-1])))
        elif ins.keyword == "WORKDIR" and words and words[0].startswith("/"):
            workdirs.add(str(PurePosixPath(words[0])))
    return inputs, workdirs


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def task_outputs(
    declared: Iterable[str],
    tests: Iterable[str],
    solution: Iterable[str],
    image: tuple[Iterable[str], Iterable[str]] = ((), ()),
) -> tuple[list[str], list[str]]:
    """(outputs, notes): the declared outputs that are usable plus those inferred from the texts (``image``: what
    ``image_paths`` found), none inside another (Harbor lints overlapping artifacts; a directory covers its
    files), at most ``MAX_OUTPUTS``."""
    notes: list[str] = []
    chosen: list[str] = []
    for path in declared:
        clean = path.strip()
        problem = output_problem(clean)
        if problem is not None:
            notes.append(f"left out output {path!r}: {problem}")
        elif clean not in chosen:
            chosen.append(clean)
    written = mentioned_paths(solution)
    inputs, workdirs = set(image[0]), set(image[1])
    inferred = sorted(
        p
        for p in mentioned_paths(tests)
        if any(_within(p, w) or _within(w, p) for w in written)
        and not any(_within(p, i) for i in inputs)
        and not any(_within(w, p) for w in workdirs)
    )
    chosen += [p for p in inferred if not any(_within(p, c) for c in chosen)]
    kept = [p for p in chosen if not any(q != p and _within(p, q) for q in chosen)]
    if len(kept) > MAX_OUTPUTS:
        notes.append(f"kept the first {MAX_OUTPUTS} of {len(kept)} outputs")
    return kept[:MAX_OUTPUTS], notes
