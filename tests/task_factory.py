"""Tiny task dirs for tests: a clean, lint-free task that each test bends in one place."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

TASK_TOML = """\
schema_version = "1.4"

[task]
name = "autoenv/tiny"

[metadata]
difficulty = "easy"
category = "testing"
tags = ["tiny"]

[verifier]
timeout_sec = 120

[agent]
timeout_sec = 600

[environment]
build_timeout_sec = 600
cpus = 1
memory_mb = 1024

[metadata.harbor.lint]
ignore = ["shared-verifier"]  # the tiny task's tests run in the agent's container
"""

DOCKERFILE = """\
FROM autoenv/terminal:latest
WORKDIR /app
RUN echo hello > /app/input.txt
"""

TEST_SH = """\
#!/bin/bash
mkdir -p /logs/verifier
if python3 -m pytest -q /tests/test_outputs.py; then echo 1 > /logs/verifier/reward.txt
else echo 0 > /logs/verifier/reward.txt; fi
"""

TEST_PY = """\
from pathlib import Path


def test_output():
    assert Path("/app/output.txt").read_text() == "HELLO\\n"
"""

DEFAULT_FILES: dict[str, str] = {
    "task.toml": TASK_TOML,
    "instruction.md": "Read /app/input.txt and write it upper-cased to /app/output.txt.\n",
    "environment/Dockerfile": DOCKERFILE,
    "solution/solve.sh": "#!/bin/bash\ntr a-z A-Z < /app/input.txt > /app/output.txt\n",
    "tests/test.sh": TEST_SH,
    "tests/test_outputs.py": TEST_PY,
}

MakeTask = Callable[..., Path]


def write_task(root: Path, files: dict[str, str | None] | None = None) -> Path:
    """Default files, each overridden by ``files`` (None removes it)."""
    merged: dict[str, str | None] = {**DEFAULT_FILES, **(files or {})}
    for rel, text in merged.items():
        if text is None:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
