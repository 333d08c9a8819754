#!/bin/bash
python3 - <<'PY'
import csv, json
with open("/app/totals.json") as f:
    totals = json.load(f)
with open("/app/incoming/sales-feb.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["item"]] = totals.get(row["item"], 0) + int(row["qty"])
with open("/app/totals.json", "w") as f:
    json.dump(totals, f)
with open("/app/top.txt", "w") as f:
    f.write(max(totals, key=totals.get) + "\n")
PY
