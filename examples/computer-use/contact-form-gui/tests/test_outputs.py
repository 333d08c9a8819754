"""Grades the application state: the record the Contact Form app saved in /app/data/contact.json."""

import hashlib
import json
from pathlib import Path

RECORD = Path("/app/data/contact.json")
APP = Path("/app/contact_app.py")
# sha256 of the shipped app: the record must come from the unmodified application.
APP_SHA256 = "515f2e16e92bd66cd0e389e0852820e4897df8efaff4b33ceed42b22b29dcadb"


def load():
    assert RECORD.is_file(), "no saved record: press Save in the application"
    return json.loads(RECORD.read_text())


def test_app_unmodified():
    assert hashlib.sha256(APP.read_bytes()).hexdigest() == APP_SHA256


def test_record_fields():
    record = load()
    assert set(record) == {"name", "email", "subscribe", "plan", "saves"}, "written by something else than the app"
    assert record["name"] == "Ada Lovelace"
    assert record["email"] == "ada@analytical.example"


def test_newsletter_and_plan():
    record = load()
    assert record["subscribe"] is True
    assert record["plan"] == "team"


def test_saved_through_the_app():
    saves = load()["saves"]
    assert isinstance(saves, int) and saves >= 1
