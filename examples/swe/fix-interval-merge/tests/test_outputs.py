"""Hidden tests: the nested-interval bug (fail-to-pass) and behaviour that already worked (pass-to-pass)."""

import sys

import pytest

sys.path.insert(0, "/app")

from intervals import gaps, merge, overlaps, total_length

# --- fail to pass ---


def test_nested_interval_is_absorbed():
    assert merge([(1, 10), (2, 3)]) == [(1, 10)]


def test_nested_chain():
    assert merge([(0, 100), (10, 20), (30, 40), (90, 95), (150, 160)]) == [(0, 100), (150, 160)]


def test_nested_then_touching():
    assert merge([(1, 10), (2, 3), (10, 12)]) == [(1, 12)]


def test_total_length_with_nesting():
    assert total_length([(1, 10), (2, 3), (4, 5)]) == 9


def test_gaps_with_nesting():
    assert gaps([(2, 8), (3, 4)], 0, 10) == [(0, 2), (8, 10)]


# --- pass to pass ---


def test_empty():
    assert merge([]) == []
    assert total_length([]) == 0
    assert gaps([], 0, 5) == [(0, 5)]


def test_disjoint_sorted():
    assert merge([(5, 6), (1, 2), (8, 9)]) == [(1, 2), (5, 6), (8, 9)]


def test_overlap_and_touch():
    assert merge([(1, 4), (3, 6), (6, 7)]) == [(1, 7)]


def test_point_intervals():
    assert merge([(3, 3), (3, 3)]) == [(3, 3)]
    assert total_length([(3, 3)]) == 0


def test_input_not_mutated():
    data = [(4, 5), (1, 10)]
    merge(data)
    assert data == [(4, 5), (1, 10)]


def test_invalid_interval_raises():
    with pytest.raises(ValueError):
        merge([(1, 2), (3, 1)])
    with pytest.raises(ValueError):
        overlaps((2, 1), (0, 5))


def test_overlaps():
    assert overlaps((1, 2), (2, 5))
    assert overlaps((1, 10), (3, 4))
    assert not overlaps((1, 2), (3, 5))


def test_gaps_clipped_to_range():
    assert gaps([(-5, 1), (4, 6), (20, 30)], 0, 10) == [(1, 4), (6, 10)]
