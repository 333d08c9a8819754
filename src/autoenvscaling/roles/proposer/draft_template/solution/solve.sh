#!/bin/bash
set -euo pipefail
tr 'a-z' 'A-Z' < /app/data/words.txt > /app/output.txt
