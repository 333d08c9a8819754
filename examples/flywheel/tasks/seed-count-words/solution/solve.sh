#!/bin/bash
set -euo pipefail
wc -w < /app/text.txt > /app/words.txt
