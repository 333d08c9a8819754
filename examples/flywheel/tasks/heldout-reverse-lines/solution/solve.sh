#!/bin/bash
set -euo pipefail
tac /app/lines.txt > /app/reversed.txt
