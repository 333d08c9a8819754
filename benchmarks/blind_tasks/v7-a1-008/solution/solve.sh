#!/bin/bash
grep -E 'GET /x HTTP/1.1' /app/logs/access.log /app/logs/access.log.1 /app/logs/access.log.2.gz \
  | wc -l > /app/errors.txt
