#!/bin/bash
set -euo pipefail
echo "hello world" > /app/greeting.txt
