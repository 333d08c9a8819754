#!/bin/bash
# Runs the hidden tests and writes the reward: 1 when all pass, else 0.
mkdir -p /logs/verifier
if python3 -m pytest -q -p no:cacheprovider /tests/test_outputs.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
