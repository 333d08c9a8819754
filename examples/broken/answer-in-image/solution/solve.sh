#!/bin/bash
set -euo pipefail
tail -n +2 /app/inventory.csv | awk -F, '{t[$2] += $3} END {for (w in t) print w ": " t[w]}' | sort > /app/report.txt
