#!/bin/bash
set -euo pipefail
# The status code follows the closing quote of the request line: `"GET /x HTTP/1.1" 200 123 ...`.
{ cat /app/logs/access.log /app/logs/access.log.1; zcat /app/logs/access.log.2.gz; } \
  | grep -oE '^[^ ]+ [^ ]+ [^ ]+ \[[^]]+\] "[^"]*" [0-9]{3} ' \
  | awk '{print $(NF)}' \
  | sort -n | uniq -c \
  | awk '{print $2, $1; total += $1} END {print "total", total}' > /app/report.txt
