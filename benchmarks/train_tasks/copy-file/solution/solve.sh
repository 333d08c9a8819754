#!/bin/bash
set -euo pipefail
mkdir -p /app/backup
cp /app/notes.txt /app/backup/notes.txt
