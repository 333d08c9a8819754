#!/bin/bash
awk '$4 > 399 {print $0}' /app/data/access.log > /app/filtered_errors.txt
