#!/bin/bash
awk '$4 == 500 || $4 == 200 {print $0}' /app/data/access.log > /app/result.txt
