#!/bin/bash
grep 'GET' /app/data/access.log > /app/get_requests.txt
