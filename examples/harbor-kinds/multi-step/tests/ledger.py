"""Helpers shared by the steps' tests."""

import json
from pathlib import Path


def totals() -> dict[str, int]:
    data = json.loads(Path("/app/totals.json").read_text())
    assert isinstance(data, dict)
    return data
