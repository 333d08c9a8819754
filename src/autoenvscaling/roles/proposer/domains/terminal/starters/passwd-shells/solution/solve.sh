#!/bin/bash
awk -F: '$7 == "/bin/bash" {print $1}' /app/data/passwd | sort > /app/bash_users.txt
