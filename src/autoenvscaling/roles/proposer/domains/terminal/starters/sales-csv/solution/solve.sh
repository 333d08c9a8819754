#!/bin/bash
awk -F, 'NR > 1 {t[$2] += $4} END {for (r in t) print r, t[r]}' /app/data/sales.csv | sort > /app/units.txt
