#!/bin/bash
# Runs in /app before step 2: January's file is archived, February's goes to incoming/.
set -e
mkdir -p /app/archive /app/incoming
mv /app/sales-jan.csv /app/archive/
mv /app/sales-feb.csv /app/incoming/
rm /app/setup.sh
