"""/app/low-stock.txt lists the low-stock SKUs; the expected list is also checked against the live service."""

import json
import urllib.request
from pathlib import Path

EXPECTED = ["SKU-102", "SKU-103", "SKU-105", "SKU-107", "SKU-110", "SKU-112", "SKU-114"]


def test_low_stock_list() -> None:
    out = Path("/app/low-stock.txt")
    assert out.is_file(), "no /app/low-stock.txt"
    assert out.read_text().split() == EXPECTED
    assert out.read_text().endswith("\n") and "" not in out.read_text().splitlines()


def test_the_service_agrees() -> None:
    """The verifier's environment runs the service too (a fresh one): its data still gives EXPECTED."""
    page, low = 1, []
    while page is not None:
        with urllib.request.urlopen(f"http://inventory:8000/items?page={page}", timeout=10) as response:
            data = json.load(response)
        low += [item["sku"] for item in data["items"] if item["qty"] < 5]
        page = data["next"]
    assert sorted(low) == EXPECTED
