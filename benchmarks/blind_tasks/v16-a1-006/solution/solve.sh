#!/bin/bash
awk '$4 > 400' /app/data/access.log > /app/error_codes_400_and_above.txt
