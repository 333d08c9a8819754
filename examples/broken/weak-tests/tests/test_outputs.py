import re
from pathlib import Path


def test_counts():
    lines = Path("/app/counts.txt").read_text().splitlines()
    # Wrong on purpose: only the shape is checked (four "word: number" lines), not the words' order or counts.
    assert len(lines) == 4
    assert {line.split(":")[0] for line in lines} == {"apple", "fig", "kiwi", "pear"}
    assert all(re.fullmatch(r"[a-z]+: \d+", line) for line in lines)
