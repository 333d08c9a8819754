"""Operations on closed intervals given as ``(start, end)`` tuples with ``start <= end``."""

from __future__ import annotations

Interval = tuple[int, int]


def _check(interval: Interval) -> Interval:
    start, end = interval
    if start > end:
        raise ValueError(f"interval {interval!r} has start > end")
    return start, end


def merge(intervals: list[Interval]) -> list[Interval]:
    """Merge overlapping or touching intervals into a sorted list of disjoint intervals."""
    merged: list[Interval] = []
    for start, end in sorted(_check(i) for i in intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def total_length(intervals: list[Interval]) -> int:
    """Length of the union of the intervals (a point interval has length 0)."""
    return sum(end - start for start, end in merge(intervals))


def overlaps(a: Interval, b: Interval) -> bool:
    """Whether two intervals share at least one point."""
    a, b = _check(a), _check(b)
    return a[0] <= b[1] and b[0] <= a[1]


def gaps(intervals: list[Interval], lo: int, hi: int) -> list[Interval]:
    """The parts of ``[lo, hi]`` not covered by any interval."""
    out: list[Interval] = []
    cursor = lo
    for start, end in merge(intervals):
        if end < lo or start > hi:
            continue
        if start > cursor:
            out.append((cursor, start))
        cursor = max(cursor, end)
    if cursor < hi:
        out.append((cursor, hi))
    return out
