from pathlib import Path


def test_keys() -> None:
    assert Path("/app/keys.txt").read_text().splitlines() == ["host", "port", "log_level", "log_file", "timeout"]
