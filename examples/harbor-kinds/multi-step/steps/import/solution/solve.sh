#!/bin/bash
python3 - <<'PY'
import csv, json
totals = {}
with open("/app/sales-jan.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["item"]] = totals.get(row["item"], 0) + int(row["qty"])
with open("/app/totals.json", "w") as f:
    json.dump(totals, f)
PY
