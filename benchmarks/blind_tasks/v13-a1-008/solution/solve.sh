#!/bin/bash
awk '$4 >= 400' /app/data/access.log > /app/errors.txt
