"""What an instruction says of its output's order, checked against the recorded output: one direction
("sorted by frequency in descending order", ``order_violation``) or a sort (``sorted by the IP address``,
``sort_violation``). Part of ``claims.contradiction``."""

from __future__ import annotations

import re
from typing import Any

from autoenvscaling.roles.proposer.staged.grading import normalized
from autoenvscaling.roles.proposer.staged.sources import SENTENCE

_DESCENDING = re.compile(r"\b(?:descending|decreasing|largest first|highest first|most frequent first)\b")
_ASCENDING = re.compile(r"\b(?:ascending|increasing|smallest first|lowest first|least frequent first)\b")


def order_violation(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why the output contradicts an order the instruction states (``sorted by frequency in descending order``),
    or None: the instruction names one direction only, in a sentence with no negation, and no column of the
    output that holds a number on every line (a last ``total 244`` line left out) runs that way (yield
    series v13 #11 said "by frequency in descending order" of a list sorted by status code, smallest first).
    Not for a filter (every output line an input line): its order may be one of a field that is no plain
    number, such as a timestamp."""
    lower = " ".join(
        sentence
        for sentence in re.split(r"[.;\n]", instruction.lower())
        if not re.search(r"\b(?:not|no|nor|unless|except)\b", sentence)
    )
    down, up = bool(_DESCENDING.search(lower)), bool(_ASCENDING.search(lower))
    known = {ln for text in inputs.values() for ln in normalized(text)}
    if all(ln in known for ln in normalized(output)):
        return None
    rows = [ln.split() for ln in normalized(output)]
    rows = without_total(rows)
    if down == up or len(rows) < 2:
        return None
    width = min(len(r) for r in rows)
    columns = [[float(r[j]) for r in rows] for j in range(width) if all(is_number(r[j]) for r in rows)]
    if not columns:
        return None
    if any(c == sorted(c, reverse=down) for c in columns):
        return None
    word = (_DESCENDING if down else _ASCENDING).search(lower)
    assert word is not None
    return (
        f'the instruction says "{word.group(0)}", but no number column of the output runs that way '
        f"(`{' '.join(rows[0])}` comes before `{' '.join(rows[1])}`)"
    )


_SORTED = re.compile(r"\b(?:sort(?:ed|s|ing)?|ordered by|in order of|arranged by)\b")
_KEEPS_ORDER = re.compile(
    r"\b(?:not|no|un\w*|without|same order|original order|input order|order they|as they appear|appear in)\b"
)


def sort_violation(instruction: str, output: str) -> str | None:
    """Why the output is not sorted as the instruction says, or None: a sentence says the lines are sorted
    (``sorted by the IP address``; no negation and no words of keeping the input's order in it), and neither the
    whole lines nor any field (counted from the start or from the end) of three or more output lines runs in
    order, either way, as numbers, as text or as versions (``10.0.0.9`` before ``10.0.0.10``); a last ``total``
    line left out (yield series v16 #9: "sorted by the IP address" of a ``grep`` that kept the log's order, and a
    mechanical note saying so beside it)."""
    said = next(
        (m for sentence in SENTENCE.split(instruction.lower()) if not _KEEPS_ORDER.search(sentence)
         for m in [_SORTED.search(sentence)] if m),
        None,
    )  # fmt: skip
    rows = without_total([ln.split() for ln in normalized(output)])
    if said is None or len(rows) < 3 or min(len(r) for r in rows) == 0:
        return None
    width = min(len(r) for r in rows)
    keys = [[" ".join(r) for r in rows]] + [[r[j] for r in rows] for j in [*range(width), *range(-width, 0)]]
    if any(len(set(column)) > 1 and _in_order(column) for column in keys):  # one value throughout: no order
        return None
    return (
        f'the instruction says "{said.group(0)}", but no field of the output runs in order '
        f"(`{' '.join(rows[0])}`, `{' '.join(rows[1])}`, `{' '.join(rows[2])}`)"
    )


def _in_order(values: list[str]) -> bool:
    """Whether ``values`` run in order, up or down, as numbers (when all are), as text or as versions."""
    orders: list[list[Any]] = [values, [_version(v) for v in values]]
    if all(is_number(v) for v in values):
        orders.append([float(v) for v in values])
    return any(o == sorted(o) or o == sorted(o, reverse=True) for o in orders)


def _version(value: str) -> tuple[tuple[int, str], ...]:
    return tuple((int(p), "") if p.isdigit() else (0, p) for p in re.findall(r"\d+|\D+", value))


def without_total(rows: list[list[str]]) -> list[list[str]]:
    """``rows`` without a last ``total 244`` (``sum``, ``all``, ``overall``) line."""
    return rows[:-1] if rows and rows[-1][0].lower().rstrip(":") in ("total", "sum", "all", "overall") else rows


def is_number(field: str) -> bool:
    return re.fullmatch(r"-?\d+(?:\.\d+)?", field) is not None
