#!/bin/bash
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

path = Path("/app/todo/cli.py")
src = path.read_text()

search = '''

def _search(args: argparse.Namespace) -> int:
    term = args.term.casefold()
    found = [i for i in store.load() if term in i.text.casefold() and not (args.open and i.done)]
    for item in sorted(found, key=lambda i: i.id):
        print(item.render())
    return 0 if found else 1
'''
anchor = "\n\ndef build_parser()"
src = src.replace(anchor, search + anchor, 1)

register = '''    search = sub.add_parser("search", help="find items by text")
    search.add_argument("term")
    search.add_argument("--open", action="store_true", help="only items not done yet")
    search.set_defaults(func=_search)
    return parser
'''
src = src.replace("    return parser\n", register, 1)
path.write_text(src)
PY
cd /app && python3 -m pytest -q -p no:cacheprovider tests
