#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import csv
import json
from collections import defaultdict
from decimal import Decimal

by_region = defaultdict(Decimal)
by_product = defaultdict(Decimal)
monthly = defaultdict(lambda: [0, Decimal(0)])
orders = units = 0
with open("/app/data/sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        if row["status"].strip() != "completed":
            continue
        qty = int(row["quantity"])
        revenue = Decimal(row["unit_price"]) * qty  # Decimal: cents stay exact
        orders += 1
        units += qty
        by_region[row["region"].strip().lower()] += revenue
        by_product[row["product"]] += revenue
        month = monthly[row["date"][:7]]
        month[0] += 1
        month[1] += revenue

summary = {
    "orders": orders,
    "units": units,
    "revenue": float(round(sum(by_region.values()), 2)),
    "by_region": {r: float(round(v, 2)) for r, v in sorted(by_region.items())},
    "top_product": max(by_product, key=by_product.get),
}
with open("/app/summary.json", "w") as f:
    json.dump(summary, f, indent=2)
with open("/app/monthly.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["month", "orders", "revenue"])
    for month, (count, revenue) in sorted(monthly.items()):
        w.writerow([month, count, f"{revenue:.2f}"])
PY
