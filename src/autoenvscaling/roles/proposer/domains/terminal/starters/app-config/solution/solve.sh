#!/bin/bash
awk -F' = ' '!/^#/ && NF == 2 {print $1}' /app/data/app.conf > /app/keys.txt
