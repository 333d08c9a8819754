#!/bin/bash
# Grades the snapshot the collect hook took of the agent's database (this container never saw the agent's).
mkdir -p /logs/verifier
python3 /tests/grade.py > /logs/verifier/reward.json
