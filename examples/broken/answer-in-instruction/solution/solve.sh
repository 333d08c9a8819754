#!/bin/bash
set -euo pipefail
awk '$4 < 300' /app/access.log > /app/ok.txt
