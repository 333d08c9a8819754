"""Grades the customer/order join: /app/customer_totals.csv and /app/unmatched_orders.txt."""

import csv
import hashlib
from pathlib import Path

DATA_SHA256 = {
    "customers.csv": "47bd013d2fca2b1f90484879ca7476eb5a8c06f65a287fb7d10730142ac750de",
    "orders.csv": "3eed44128f2398ef1007f22d49a2ce32a2c031e3e6e14c268431e47d65b22f9f",
}

EXPECTED_ROWS = [
    ["C004", "Umbrella Corp", "GB", "7", "1596.98"],
    ["C001", "Acme, Inc.", "US", "5", "1326.91"],
    ["C006", "Vandelay Industries", "US", "5", "1324.60"],
    ["C002", "Globex", "US", "4", "1111.35"],
    ["C011", "Cyberdyne", "US", "4", "952.35"],
    ["C005", "Hooli", "US", "3", "945.73"],
    ["C003", "Initech", "CA", "5", "696.21"],
    ["C010", 'Wonka "Chocolate" Ltd', "GB", "4", "529.76"],
    ["C007", "Stark, Wayne & Co", "GB", "3", "371.41"],
    ["C008", "Tyrell", "JP", "2", "318.72"],
    ["C009", "Soylent", "FR", "0", "0.00"],
    ["C012", "Gringotts", "GB", "0", "0.00"],
]


def read_totals():
    with open("/app/customer_totals.csv", newline="") as f:
        return list(csv.reader(f))


def test_header():
    assert Path("/app/customer_totals.csv").read_text().split("\n", 1)[0] == (
        "customer_id,name,country,order_count,total_spent"
    )


def test_rows():
    assert read_totals()[1:] == EXPECTED_ROWS


def test_unmatched_orders():
    lines = Path("/app/unmatched_orders.txt").read_text().splitlines()
    assert lines == ["O0004", "O0007", "O0018", "O0028", "O0034", "O0043"]


def test_inputs_untouched():
    for name, digest in DATA_SHA256.items():
        assert hashlib.sha256((Path("/app/data") / name).read_bytes()).hexdigest() == digest, name
