#!/bin/bash
set -e
python3 - <<'PY'
import json
import urllib.request

page, low = 1, []
while page is not None:
    with urllib.request.urlopen(f"http://inventory:8000/items?page={page}") as response:
        data = json.load(response)
    low += [item["sku"] for item in data["items"] if item["qty"] < 5]
    page = data["next"]
with open("/app/low-stock.txt", "w") as out:
    out.write("".join(f"{sku}\n" for sku in sorted(low)))
PY
