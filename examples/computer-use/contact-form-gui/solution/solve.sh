#!/bin/bash
# Drives the real GUI: start the display, launch the app, fill the form with the keyboard, press Save.
# Each attempt polls for the saved record; a failed attempt restarts the app (the form starts empty).
set -uo pipefail
start-display

saved() {
  grep -q '"name": "Ada Lovelace"' /app/data/contact.json 2>/dev/null \
    && grep -q '"email": "ada@analytical.example"' /app/data/contact.json \
    && grep -q '"subscribe": true' /app/data/contact.json \
    && grep -q '"plan": "team"' /app/data/contact.json
}

for attempt in 1 2 3; do
  echo "attempt $attempt"
  python3 /app/contact_app.py > /tmp/contact_app.log 2>&1 &
  app=$!
  wid=$(timeout 60 xdotool search --sync --name '^Contact Form$' | head -1)
  if [ -n "$wid" ]; then
    xdotool windowactivate --sync "$wid" || xdotool windowfocus --sync "$wid"
    sleep 1
    xdotool type --delay 60 'Ada Lovelace'
    xdotool key Tab
    xdotool type --delay 60 'ada@analytical.example'
    # Tab order after the email: Subscribe checkbox, Free, Team, Enterprise, Save.
    xdotool key --delay 200 Tab space Tab Tab space Tab Tab space
    for _ in $(seq 1 50); do
      saved && break
      sleep 0.2
    done
  fi
  if saved; then
    cat /app/data/contact.json
    exit 0
  fi
  kill "$app" 2>/dev/null
  wait "$app" 2>/dev/null
done
echo "the form was not saved" >&2
exit 1
