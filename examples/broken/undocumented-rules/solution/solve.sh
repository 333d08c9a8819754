#!/bin/bash
set -euo pipefail
awk -F, 'NR > 1 && $2 < 10 {print toupper($1)}' /app/stock.csv | sort > /app/restock.txt
