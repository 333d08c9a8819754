#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import csv
from decimal import Decimal

with open("/app/data/customers.csv", newline="") as f:
    customers = list(csv.DictReader(f))
known = {c["customer_id"]: c for c in customers}
count = {cid: 0 for cid in known}
spent = {cid: Decimal(0) for cid in known}
unmatched = []
with open("/app/data/orders.csv", newline="") as f:
    for order in csv.DictReader(f):
        cid = order["customer_id"]
        if cid not in known:
            unmatched.append(order["order_id"])
            continue
        count[cid] += 1
        spent[cid] += Decimal(order["amount"])

rows = sorted(known, key=lambda cid: (-spent[cid], cid))
with open("/app/customer_totals.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["customer_id", "name", "country", "order_count", "total_spent"])
    for cid in rows:
        c = known[cid]
        w.writerow([cid, c["name"], c["country"], count[cid], f"{spent[cid]:.2f}"])
with open("/app/unmatched_orders.txt", "w") as f:
    f.write("".join(o + "\n" for o in unmatched))
PY
