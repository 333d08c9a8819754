"""Mutants of the reference solution's outputs: plausibly wrong answers that good tests reject.

Operators (on a text output the tests read): ``empty``, ``truncate`` (first half), ``drop-line`` (first, last,
middle non-blank line), ``off-by-one`` (first and last number), ``reorder`` (lines reversed). Mutants identical
to the output or to one another are dropped; at most ``limit`` are kept, taken round-robin over the outputs so
each output is mutated.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


class Mutant(BaseModel):
    path: str
    operator: str
    content: str


def _off_by_one(text: str, match: re.Match[str]) -> str:
    token = match.group(0)
    if "." in token:
        whole, _, frac = token.partition(".")
        bumped = f"{int(whole) + 1}.{frac}" if whole not in ("", "-") else token
    else:
        bumped = str(int(token) + 1)
    return text[: match.start()] + bumped + text[match.end() :]


def _drop_line(lines: list[str], i: int) -> str:
    return "".join(lines[:i] + lines[i + 1 :])


def mutants_of(path: str, text: str) -> list[Mutant]:
    """Every mutant of one output, most telling first."""
    lines = text.splitlines(keepends=True)
    content = [i for i, ln in enumerate(lines) if ln.strip()]
    numbers = list(_NUMBER.finditer(text))
    candidates: list[tuple[str, str]] = [("empty", "")]
    if len(lines) > 1:
        candidates.append(("truncate", "".join(lines[: len(lines) // 2])))
    else:
        line = text.rstrip("\n")  # half of the line itself: a dropped newline alone is no wrong answer
        candidates.append(("truncate", line[: len(line) // 2]))
    if numbers:
        candidates.append(("off-by-one", _off_by_one(text, numbers[0])))
    if len(content) > 1:
        candidates.append(("drop-line", _drop_line(lines, content[0])))
        candidates.append(("reorder", "".join(reversed([ln if ln.endswith("\n") else ln + "\n" for ln in lines]))))
        candidates.append(("drop-line", _drop_line(lines, content[-1])))
    if len(numbers) > 1:
        candidates.append(("off-by-one", _off_by_one(text, numbers[-1])))
    if len(content) > 2:
        candidates.append(("drop-line", _drop_line(lines, content[len(content) // 2])))
    seen = {text}
    out: list[Mutant] = []
    for op, body in candidates:
        if body in seen:
            continue
        seen.add(body)
        out.append(Mutant(path=path, operator=op, content=body))
    return out


def select_mutants(outputs: dict[str, str], limit: int) -> list[Mutant]:
    """At most ``limit`` mutants over all outputs, round-robin (outputs in path order)."""
    per_file = [mutants_of(p, outputs[p]) for p in sorted(outputs)]
    chosen: list[Mutant] = []
    depth = 0
    while len(chosen) < limit and any(depth < len(m) for m in per_file):
        chosen += [m[depth] for m in per_file if depth < len(m)]
        depth += 1
    return chosen[:limit]
