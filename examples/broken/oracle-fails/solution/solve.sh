#!/bin/bash
set -euo pipefail
# Wrong on purpose: `wc -l FILE` prints "37 /app/input.txt", not just the number.
wc -l /app/input.txt > /app/count.txt
