#!/bin/bash
# Drives the real GUI with the keyboard: delete the duplicate row, then add the two expenses.
# Each step is checked in the CSV the app writes; an attempt that fails restarts the app and carries on
# from whatever state the file is in.
set -uo pipefail
CSV=/app/data/expenses.csv
DUPLICATE='2026-03-02,travel,95.00'
start-display

rows() { tail -n +2 "$CSV" | wc -l; }
has() { grep -qx "$1" "$CSV"; }
wait_rows() {
  for _ in $(seq 1 50); do
    [ "$(rows)" -eq "$1" ] && return 0
    sleep 0.2
  done
  return 1
}

launch() {
  python3 /app/expense_app.py > /tmp/expense_app.log 2>&1 &
  app=$!
  wid=$(timeout 60 xdotool search --sync --name '^Expense Tracker$' | head -1)
  [ -n "$wid" ] || return 1
  xdotool windowactivate --sync "$wid" || xdotool windowfocus --sync "$wid"
  sleep 1  # the app puts the keyboard focus into the Date field
}

delete_duplicate() {
  local n
  n=$(rows)
  # From the Date field, Tab x4 reaches the list (Category, Amount, Add, list). Ctrl+Home selects row 0,
  # Down selects row 1 (the first travel copy), Tab moves to "Delete selected", space presses it.
  xdotool key --delay 200 Tab Tab Tab Tab ctrl+Home Down Tab space
  wait_rows $((n - 1))
}

add() {  # DATE CATEGORY AMOUNT, typed into the form; the focus is in the Date field
  local n
  n=$(rows)
  xdotool type --delay 60 "$1"
  xdotool key Tab
  xdotool type --delay 60 "$2"
  xdotool key Tab
  xdotool type --delay 60 "$3"
  xdotool key --delay 200 Tab space
  wait_rows $((n + 1))
}

finished() {
  [ "$(grep -cx "$DUPLICATE" "$CSV")" -eq 1 ] && has '2026-03-05,software,49.00' && has '2026-03-06,food,7.50'
}

app=""
for attempt in 1 2 3; do
  echo "attempt $attempt"
  if launch; then
    ok=1
    if [ "$(grep -cx "$DUPLICATE" "$CSV")" -gt 1 ]; then delete_duplicate || ok=0; fi
    if [ $ok = 1 ] && ! has '2026-03-05,software,49.00'; then add 2026-03-05 software 49 || ok=0; fi
    if [ $ok = 1 ] && ! has '2026-03-06,food,7.50'; then add 2026-03-06 food 7.5 || ok=0; fi
  fi
  if finished; then
    cat "$CSV"
    exit 0
  fi
  [ -n "$app" ] && kill "$app" 2>/dev/null && wait "$app" 2>/dev/null
done
echo "the expenses were not updated" >&2
cat "$CSV" >&2
exit 1
