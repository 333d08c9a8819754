#!/bin/bash
grep -E '[4-9][0-9]' /app/data/access.log >> /app/report.txt
