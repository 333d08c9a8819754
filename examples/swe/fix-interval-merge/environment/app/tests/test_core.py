import pytest
from intervals import gaps, merge, overlaps, total_length


def test_merge_disjoint_stays_sorted():
    assert merge([(5, 6), (1, 2)]) == [(1, 2), (5, 6)]


def test_merge_overlapping():
    assert merge([(1, 4), (3, 6)]) == [(1, 6)]


def test_merge_touching():
    assert merge([(1, 2), (2, 3)]) == [(1, 3)]


def test_invalid_interval():
    with pytest.raises(ValueError):
        merge([(3, 1)])


def test_total_length():
    assert total_length([(0, 2), (1, 3), (10, 11)]) == 4


def test_overlaps():
    assert overlaps((1, 2), (2, 5))
    assert not overlaps((1, 2), (3, 5))


def test_gaps():
    assert gaps([(2, 3), (5, 6)], 0, 10) == [(0, 2), (3, 5), (6, 10)]
