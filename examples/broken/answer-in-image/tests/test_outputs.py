from pathlib import Path


def test_report_is_exact():
    assert Path("/app/report.txt").read_text() == "east: 31\nnorth: 47\nsouth: 18\n"
