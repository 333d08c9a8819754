"""Parent task dirs for the ``combine`` tests: small staged-style tasks on the terminal image."""

from __future__ import annotations

import os
from pathlib import Path

IMAGE = "autoenv/terminal:latest"
# The same file name as the terminal worked example's input, other content: a combine child must rename one.
ACCESS_LOG = "10.0.0.7 GET /a 404\n10.0.0.8 GET /b 200\n10.0.0.7 GET /c 404\n10.0.0.9 GET /d 301\n"
IPS_SOLVE = "#!/bin/bash\ncut -d' ' -f1 /app/data/access.log | sort -u > /app/ips.txt\n"


def make_parent(
    root: Path,
    name: str,
    *,
    image: str = IMAGE,
    files: dict[str, str] | None = None,
    copy: str = "COPY data/ /app/data/",
    instruction: str = "List the distinct IPs of /app/data/access.log, one per line, sorted, in /app/ips.txt.",
    solve: str = IPS_SOLVE,
) -> Path:
    """A task dir at ``root/name`` whose Dockerfile starts FROM ``image`` and COPYs ``files`` (path under
    environment/ -> text)."""
    task = root / name
    env = task / "environment"
    for rel, text in ({"data/access.log": ACCESS_LOG} if files is None else files).items():
        (env / rel).parent.mkdir(parents=True, exist_ok=True)
        (env / rel).write_text(text, encoding="utf-8")
    env.mkdir(parents=True, exist_ok=True)
    (env / "Dockerfile").write_text(f"FROM {image}\nWORKDIR /app\n{copy}\n", encoding="utf-8")
    (task / "instruction.md").write_text(instruction + "\n", encoding="utf-8")
    (task / "solution").mkdir(parents=True, exist_ok=True)
    (task / "solution" / "solve.sh").write_text(solve, encoding="utf-8")
    os.chmod(task / "solution" / "solve.sh", 0o755)
    (task / "task.toml").write_text('schema_version = "1.4"\n[task]\nname = "test/' + name + '"\n', encoding="utf-8")
    return task
