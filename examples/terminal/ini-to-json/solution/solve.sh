#!/bin/bash
set -euo pipefail
mkdir -p /app/json
python3 - <<'PY'
import configparser
import json
import re
from pathlib import Path


def convert(value: str):
    if re.fullmatch(r"-?[0-9]+", value):
        return int(value)
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


for ini in sorted(Path("/app/config").glob("*.ini")):
    parser = configparser.ConfigParser(interpolation=None, comment_prefixes=("#", ";"), delimiters=("=",))
    parser.optionxform = str  # keep key case
    parser.read(ini)
    data = {s: {k: convert(v.strip()) for k, v in parser[s].items()} for s in parser.sections()}
    Path("/app/json", ini.stem + ".json").write_text(json.dumps(data, indent=2) + "\n")
PY
