#!/bin/bash
# Writes the reward: 1 when /app/greeting.txt holds the line "hello world" (surrounding blanks ignored), else 0.
mkdir -p /logs/verifier
if [ "$(sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' /app/greeting.txt 2>/dev/null | grep -v '^$')" = "hello world" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
