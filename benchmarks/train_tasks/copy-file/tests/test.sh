#!/bin/bash
# Writes the reward: 1 when /app/backup/notes.txt holds exactly the three lines of the original notes, else 0.
mkdir -p /logs/verifier
expected=$'buy milk\ncall the plumber on tuesday\nreturn the library books'
if [ -f /app/backup/notes.txt ] && [ "$(cat /app/backup/notes.txt)" = "$expected" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
