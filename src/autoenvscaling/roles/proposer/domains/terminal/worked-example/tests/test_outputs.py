from pathlib import Path


def test_errors() -> None:
    assert Path("/app/errors.txt").read_text().splitlines() == ["404 2", "500 1"]
