from pathlib import Path


def test_units() -> None:
    assert Path("/app/units.txt").read_text().splitlines() == ["east 1", "north 9", "south 5"]
