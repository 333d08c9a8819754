#!/bin/bash
grep -E 'GET.*200' /app/data/access.log > /app/result.txt
