"""The ``combine`` operator: a child built on two parents.

The child's environment is the first parent's, plus the second parent's input files (the text files its
Dockerfile COPYs), written under a fresh directory of ``environment/`` and brought in by COPY lines appended
to the first parent's Dockerfile::

    environment/Dockerfile                          the first parent's, then one ``COPY <rel> <path>`` per file
    environment/combine-<second>/<its source path>  each input file of the second parent

A second-parent file keeps its container path unless the first parent's image already has a file there; then
it gets a free name next to it (``/app/data/access.log`` -> ``/app/data/access-2.log``), and every text the
model sees of the second parent (its instruction, its solve.sh, its input previews) uses the new path. The
cross-oracle runs that rewritten solve.sh too, so a child that is the second task again is not new.

The second parent's RUN lines are not carried over: only its input files are.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from autoenvscaling.roles.proposer.staged.parents import MAX_INPUTS_SHOWN, Parent, copied_files, head
from autoenvscaling.tasks.names import slug

COMBINE_DIR = "combine"
_SAFE_PATH = re.compile(r"^/?[A-Za-z0-9._@+-]+(?:/[A-Za-z0-9._@+-]+)*$")  # a COPY line splits on spaces


class Combination(BaseModel):
    """What a ``combine`` child takes of its second parent, and the files the harness adds for it."""

    first: str  # the first parent's name
    second: Parent  # the second parent as the child holds it: input files at their child paths, paths rewritten
    renamed: dict[str, str] = Field(default_factory=dict)  # second parent's container path -> the child's
    files: dict[str, str] = Field(default_factory=dict)  # path under environment/ -> text (Dockerfile included)


def fresh_dir(env_dir: Path, name: str) -> str:
    """A directory name under ``env_dir`` that does not exist yet, for the second parent's files."""
    base = f"{COMBINE_DIR}-{slug(name, lower=True, keep='-', max_len=40)}"
    candidate, n = base, 2
    while (env_dir / candidate).exists():
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def free_path(path: str, taken: set[str]) -> str:
    """``path`` with ``-2``, ``-3``... before its suffix, the first one not in ``taken``."""
    p = PurePosixPath(path)
    stem, suffix = (p.name.split(".", 1)[0], "." + p.name.split(".", 1)[1]) if "." in p.name[1:] else (p.name, "")
    n = 2
    while (candidate := str(p.with_name(f"{stem}-{n}{suffix}"))) in taken:
        n += 1
    return candidate


def rewrite_paths(text: str, renamed: dict[str, str]) -> str:
    """``text`` with each whole path in ``renamed`` replaced by its new path, in one pass (a new name that is
    another file's old name is not replaced twice)."""
    if not renamed:
        return text
    alternatives = "|".join(re.escape(p) for p in sorted(renamed, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w./-])({alternatives})(?![\w/-]|\.\w)")
    return pattern.sub(lambda m: renamed[m.group(1)], text)


def plan_combination(first: Parent, second: Parent) -> Combination:
    """The second parent's input files as the child of ``first`` and ``second`` holds them (see the module)."""
    env_dir = first.path / "environment"
    first_paths = set(copied_files(env_dir, first.dockerfile)) | set(first.data)
    taken = first_paths | set(second.data)
    subdir = fresh_dir(env_dir, second.name)
    renamed: dict[str, str] = {}
    data: dict[str, str] = {}
    sources: dict[str, str] = {}
    copies: list[str] = []
    for path, text in second.data.items():
        rel = second.sources.get(path, "")
        if not (_SAFE_PATH.match(path) and _SAFE_PATH.match(rel)):
            continue
        target = path
        if path in first_paths:
            target = free_path(path, taken)
            taken.add(target)
            renamed[path] = target
        data[target], sources[target] = text, f"{subdir}/{rel}"
        if target.endswith(".gz") and not rel.endswith(".gz"):  # the second parent compresses it in its image
            copies += [f"COPY {subdir}/{rel} {target[:-3]}", f"RUN gzip -n {target[:-3]}"]
        else:
            copies.append(f"COPY {subdir}/{rel} {target}")
    files = {sources[p]: text for p, text in data.items()}
    files["Dockerfile"] = (
        first.dockerfile.rstrip() + f"\n# combine: the input files of {second.name}\n" + "\n".join(copies) + "\n"
    )
    view = second.model_copy(
        update={
            "instruction": rewrite_paths(second.instruction, renamed),
            "solve_sh": rewrite_paths(second.solve_sh, renamed),
            "data": data,
            "sources": sources,
            "inputs": {p: head(t) for p, t in list(data.items())[:MAX_INPUTS_SHOWN]},
            "dockerfile": "",
        }
    )
    return Combination(first=first.name, second=view, renamed=renamed, files=files)
