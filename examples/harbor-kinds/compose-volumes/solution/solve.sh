#!/bin/bash
set -e
for key in release region owner; do
  grep "^$key=" /shared/manifest.txt | cut -d= -f2-
done > /app/answer.txt
