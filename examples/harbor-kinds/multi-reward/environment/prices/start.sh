#!/bin/bash
# Starts the price service in the background, then runs the container's command.
python3 /opt/prices/server.py >/tmp/prices.log 2>&1 &
exec "$@"
