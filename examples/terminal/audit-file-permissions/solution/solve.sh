#!/bin/bash
set -euo pipefail
export LC_ALL=C
find /srv/data -type f -perm -o+w | sort > /app/world_writable.txt
find /srv/data -type f -user backup -size +1048576c | sort > /app/backup_large.txt
xargs -r -d '\n' chmod o-w < /app/world_writable.txt
