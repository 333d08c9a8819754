#!/bin/bash
sed '/index/d' /app/data/access.log > /app/output.txt
