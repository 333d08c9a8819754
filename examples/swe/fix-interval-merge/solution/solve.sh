#!/bin/bash
set -euo pipefail
# A contained interval must not shrink the one it lies in: keep the larger end.
python3 - <<'PY'
from pathlib import Path

path = Path("/app/intervals/core.py")
src = path.read_text()
old = "merged[-1] = (merged[-1][0], end)"
assert old in src
path.write_text(src.replace(old, "merged[-1] = (merged[-1][0], max(merged[-1][1], end))"))
PY
cd /app && python3 -m pytest -q -p no:cacheprovider tests
