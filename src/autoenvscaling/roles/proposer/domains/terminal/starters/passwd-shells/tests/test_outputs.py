from pathlib import Path


def test_bash_users() -> None:
    assert Path("/app/bash_users.txt").read_text().splitlines() == ["alice", "carol", "root"]
