"""Task dirs for the pool tests: each has its own instruction and tests, so distinct tasks share little text."""

from __future__ import annotations

from pathlib import Path

from task_factory import TEST_SH

TASK_TOML = """\
schema_version = "1.4"

[task]
name = "autoenv/{name}"

[verifier]
timeout_sec = 120
"""

# Distinct task texts: nothing in common beyond a few function words.
TOPICS: dict[str, tuple[str, str]] = {
    "csv": (
        "Read the comma separated file /app/sales.csv which lists every order of the shop in the year. "
        "Compute the total revenue per region, sort the regions by revenue descending, and write them "
        "as a JSON object to /app/revenue.json with region names as keys and rounded integers as values.",
        "import json\n\ndef test_revenue():\n    data = json.load(open('/app/revenue.json'))\n"
        "    assert list(data) == sorted(data, key=data.get, reverse=True)\n    assert data['north'] == 1200\n",
    ),
    "nginx": (
        "Configure the nginx web server installed in the container so that it listens on port 8080 and serves "
        "the static site stored under /srv/site. Requests to /health must answer with status 200 and body ok. "
        "Keep the server running in the background after you finish.",
        "import urllib.request\n\ndef test_health():\n"
        "    body = urllib.request.urlopen('http://localhost:8080/health').read()\n    assert body == b'ok'\n",
    ),
    "git": (
        "A git repository lives at /repo. Somebody committed a private key file three commits ago and later "
        "deleted it. Rewrite the history so that the key never appears in any commit, keep every other change "
        "intact, and leave the branch main checked out.",
        "import subprocess\n\ndef test_history():\n"
        "    log = subprocess.run(['git', '-C', '/repo', 'log', '--all', '-p'], capture_output=True).stdout\n"
        "    assert b'BEGIN OPENSSH PRIVATE KEY' not in log\n",
    ),
}


def write_task(root: Path, topic: str = "csv", *, instruction: str | None = None, extra: str = "") -> Path:
    """A complete Harbor task dir about ``topic``; ``instruction`` replaces the topic's text."""
    text, test_py = TOPICS[topic]
    files = {
        "task.toml": TASK_TOML.format(name=root.name),
        "instruction.md": (instruction if instruction is not None else text) + "\n",
        "environment/Dockerfile": "FROM autoenv/python:latest\nWORKDIR /app\n",
        "solution/solve.sh": f"#!/bin/bash\necho solving {topic}\n",
        "tests/test.sh": TEST_SH,
        "tests/test_outputs.py": test_py + extra,
    }
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def one_word_changed(topic: str = "csv") -> str:
    """The topic's instruction with one word replaced: a near-duplicate."""
    return TOPICS[topic][0].replace("descending", "ascending", 1).replace("nginx web", "nginx http", 1)
