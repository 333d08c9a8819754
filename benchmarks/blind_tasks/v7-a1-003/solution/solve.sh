#!/bin/bash
awk '$4 == 400 || $4 == 500 {print}' /app/data/access.log > /app/result.txt
