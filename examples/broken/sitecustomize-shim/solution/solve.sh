#!/bin/bash
set -euo pipefail
awk '{printf "%.1f\n", $1 * 9 / 5 + 32}' /app/temps.txt > /app/fahrenheit.txt
