from pathlib import Path


def test_count():
    assert Path("/app/count.txt").read_text().strip() == "37"
