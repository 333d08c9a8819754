"""Grades /app/report.txt: per-status request counts over the three access logs."""

import hashlib
from pathlib import Path

ACCESS_LOG_SHA256 = "d173957c346de4ae55e72fae0ce86c2d789ad2f0986a346ce6b2236ca53284ab"

EXPECTED = [
    "200 122",
    "201 11",
    "204 3",
    "301 11",
    "304 13",
    "400 8",
    "401 13",
    "403 6",
    "404 24",
    "500 15",
    "502 8",
    "503 6",
    "total 240",
]


def report_lines():
    return Path("/app/report.txt").read_text().strip().splitlines()


def test_report_exists():
    assert Path("/app/report.txt").is_file()


def test_status_counts():
    assert report_lines()[:-1] == EXPECTED[:-1]


def test_total_line():
    assert report_lines()[-1] == EXPECTED[-1]


def test_logs_untouched():
    for name in ("access.log", "access.log.1", "access.log.2.gz"):
        assert (Path("/app/logs") / name).is_file(), name
    assert hashlib.sha256(Path("/app/logs/access.log").read_bytes()).hexdigest() == ACCESS_LOG_SHA256
