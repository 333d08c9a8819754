#!/bin/bash
# Wrong on purpose: the result goes to a file the verifier never reads.
mkdir -p /logs/verifier
if python3 -m pytest -q -p no:cacheprovider /tests/test_outputs.py; then
  echo 1 > /logs/verifier/result.txt
else
  echo 0 > /logs/verifier/result.txt
fi
