#!/bin/bash
set -euo pipefail
awk '$2 >= 50 {print $1}' /app/scores.txt > /app/summary.txt
