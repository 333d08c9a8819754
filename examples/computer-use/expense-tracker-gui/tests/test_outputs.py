"""Grades the application state: /app/data/expenses.csv as the Expense Tracker app rewrote it."""

import csv
import hashlib
from pathlib import Path

DATA = Path("/app/data/expenses.csv")
APP = Path("/app/expense_app.py")
# sha256 of the shipped app: the changes must come from the unmodified application.
APP_SHA256 = "f9543d8a2e9f5d59f6a0e237d9d25ded33734f3b80143aae38823a60c63de8de"
EXPECTED = [
    {"date": "2026-03-01", "category": "food", "amount": "12.40"},
    {"date": "2026-03-02", "category": "travel", "amount": "95.00"},
    {"date": "2026-03-04", "category": "office", "amount": "18.99"},
    {"date": "2026-03-05", "category": "software", "amount": "49.00"},
    {"date": "2026-03-06", "category": "food", "amount": "7.50"},
]


def rows():
    with DATA.open(newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == ["date", "category", "amount"]
        return list(reader)


def test_app_unmodified():
    assert hashlib.sha256(APP.read_bytes()).hexdigest() == APP_SHA256


def test_duplicate_removed_once():
    travel = [r for r in rows() if r["date"] == "2026-03-02"]
    assert travel == [{"date": "2026-03-02", "category": "travel", "amount": "95.00"}]


def test_new_expenses_added_in_order():
    assert rows()[3:] == EXPECTED[3:]


def test_whole_list():
    assert rows() == EXPECTED


def test_written_by_the_app():
    # The app writes "\n" line ends and replaces the file atomically through expenses.tmp.
    text = DATA.read_text()
    assert text.endswith("\n") and "\r" not in text
    assert not DATA.with_suffix(".tmp").exists()
