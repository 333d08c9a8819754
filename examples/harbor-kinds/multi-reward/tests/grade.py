"""Writes reward.json: "prices" (share of listed products at the right price), "removed" (the unlisted product is
gone) and "reward" (1 only when both are perfect)."""

import json
from pathlib import Path

EXPECTED = {"apple": 3, "fig": 7, "pear": 5}

snapshot = Path("/logs/artifacts/products.json")
rows = json.loads(snapshot.read_text() or "[]") if snapshot.is_file() else []
found = {row["name"]: row["price"] for row in rows}
prices = sum(found.get(name) == price for name, price in EXPECTED.items()) / len(EXPECTED)
removed = 1.0 if rows and set(found) <= set(EXPECTED) else 0.0
print(json.dumps({"reward": 1.0 if prices == 1.0 and removed == 1.0 else 0.0, "prices": prices, "removed": removed}))
