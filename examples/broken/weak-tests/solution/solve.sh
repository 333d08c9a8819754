#!/bin/bash
set -euo pipefail
sort /app/words.txt | uniq -c | awk '{print $2 ": " $1}' > /app/counts.txt
