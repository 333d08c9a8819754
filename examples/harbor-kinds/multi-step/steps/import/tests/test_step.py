from ledger import totals


def test_january_totals():
    assert totals() == {"apple": 7, "pear": 7, "fig": 1}
