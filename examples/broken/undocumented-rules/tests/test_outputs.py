from pathlib import Path


def test_restock_list():
    # Wrong on purpose: the threshold (fewer than 10), the upper case and the order are rules the instruction never
    # states, so a solver that does what it was asked can still score 0.
    assert Path("/app/restock.txt").read_text().splitlines() == ["BEANS", "FLOUR", "RICE", "TEA"]
