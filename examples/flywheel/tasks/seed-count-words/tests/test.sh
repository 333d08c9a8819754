#!/bin/bash
# Writes the reward: 1 when /app/words.txt holds the expected answer, else 0.
mkdir -p /logs/verifier
if [ "$(tr -d '[:space:]' < /app/words.txt 2>/dev/null)" = "9" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
