from pathlib import Path

from ledger import totals


def test_running_totals():
    assert totals() == {"apple": 8, "pear": 7, "fig": 10, "kiwi": 2}


def test_top_item():
    assert Path("/app/top.txt").read_text().strip() == "fig"
