import os
from pathlib import Path


def test_count():
    assert Path("/app/count.txt").read_text().strip() == "37"


def test_coin_flip():
    # Wrong on purpose: passes on about half of the runs, whatever the agent did.
    assert os.urandom(1)[0] < 128
