#!/bin/bash
# Writes the reward: 1 when /app/reversed.txt holds the expected answer, else 0.
mkdir -p /logs/verifier
if [ "$(tr -d '[:space:]' < /app/reversed.txt 2>/dev/null)" = "threetwoone" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
