#!/bin/bash
awk '$4 >= 400 {c[$4]++} END {for (s in c) print s, c[s]}' /app/data/access.log | sort -n > /app/errors.txt
