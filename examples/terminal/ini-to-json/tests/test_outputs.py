"""Grades the JSON files written from the INI files in /app/config."""

import json
from pathlib import Path

import pytest

EXPECTED = {
    "app": {
        "server": {"host": "0.0.0.0", "port": 8080, "Workers": 4, "debug": False},
        "database": {
            "url": "postgres://app:secret@db:5432/app",
            "pool_size": 10,
            "timeout": "2.5",
            "ssl": True,
        },
    },
    "logging": {
        "logging": {"level": "INFO", "file": "/var/log/app/app.log", "rotate": True, "max_files": 7},
        "handler.console": {"format": "%(asctime)s %(levelname)s %(message)s", "enabled": False},
    },
    "features": {
        "flags": {
            "new_ui": "yes",
            "beta_api": True,
            "Max-Retries": -3,
            "region": "eu-west-1",
            "empty_value": "",
        }
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_json_file(name):
    path = Path("/app/json") / f"{name}.json"
    assert path.is_file(), path
    assert json.loads(path.read_text()) == EXPECTED[name]


def test_types_are_exact():
    # 1 == True in Python: check the types, not only the values.
    data = json.loads(Path("/app/json/app.json").read_text())
    assert type(data["server"]["port"]) is int
    assert type(data["server"]["debug"]) is bool
    assert type(data["database"]["timeout"]) is str


def test_ini_files_kept():
    assert sorted(p.name for p in Path("/app/config").glob("*.ini")) == ["app.ini", "features.ini", "logging.ini"]
