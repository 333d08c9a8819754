"""Closed integer intervals: merging, measuring and finding gaps."""

from intervals.core import gaps, merge, overlaps, total_length

__all__ = ["gaps", "merge", "overlaps", "total_length"]
