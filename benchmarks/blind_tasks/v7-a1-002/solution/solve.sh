#!/bin/bash
set -euo pipefail
grep -oE '^[^ ]+ [^ ]+ [^ ]+ \[[^]]+\] "[^"]*" [0-9]{3}' /app/logs/access.log /app/logs/access.log.1 /app/logs/access.log.2.gz | awk '{print $1, $4}' > /app/errors.txt
