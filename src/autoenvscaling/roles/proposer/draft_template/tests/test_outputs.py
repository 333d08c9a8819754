"""Grades /app/output.txt."""

from pathlib import Path


def test_output_exists() -> None:
    assert Path("/app/output.txt").is_file()


def test_output_is_upper_case() -> None:
    assert Path("/app/output.txt").read_text().split() == ["ALPHA", "BETA", "GAMMA"]
