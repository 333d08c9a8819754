#!/bin/bash
grep -E 'GET /missing 404' /app/data/access.log > /app/errors_404.txt
