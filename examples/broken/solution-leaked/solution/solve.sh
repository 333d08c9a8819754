#!/bin/bash
set -euo pipefail
wc -l < /app/input.txt > /app/count.txt
