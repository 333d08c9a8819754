"""Grades /app/summary.json and /app/monthly.csv against numbers computed from the fixed export."""

import hashlib
import json
from pathlib import Path

import pytest

SALES_SHA256 = "8ec90dfbdf50a4311a48582f745a535fe965a61988a41e17f21b0a6a04b28167"


@pytest.fixture
def summary():
    return json.loads(Path("/app/summary.json").read_text())


def test_summary_keys(summary):
    assert set(summary) == {"orders", "units", "revenue", "by_region", "top_product"}


def test_counts(summary):
    assert summary["orders"] == 70
    assert summary["units"] == 435


def test_revenue(summary):
    assert summary["revenue"] == pytest.approx(3721.39, abs=0.001)


def test_by_region(summary):
    expected = {"east": 1446.26, "north": 780.73, "south": 944.53, "west": 549.87}
    assert set(summary["by_region"]) == set(expected)
    for region, value in expected.items():
        assert summary["by_region"][region] == pytest.approx(value, abs=0.001), region


def test_top_product(summary):
    assert summary["top_product"] == "Gadget"


def test_monthly_csv():
    assert Path("/app/monthly.csv").read_text().splitlines() == [
        "month,orders,revenue",
        "2024-01,26,1291.43",
        "2024-02,13,693.93",
        "2024-03,31,1736.03",
    ]


def test_export_untouched():
    assert hashlib.sha256(Path("/app/data/sales.csv").read_bytes()).hexdigest() == SALES_SHA256
