"""Hostile task dirs: each security test writes the smallest task that tries one attack."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from autoenvscaling.images.catalog import BASE_IMAGE

MakeTask = Callable[..., Path]

TOML = """\
schema_version = "1.4"
{top}
[verifier]
{verifier}
[agent]
{agent}
[environment]
{environment}
"""


def _with(defaults: str, given: str) -> str:
    """``given`` plus each default line whose key it does not set (tables like [verifier.env] go last)."""
    keys = {line.split("=")[0].strip() for line in given.splitlines() if "=" in line}
    kept = [line for line in defaults.splitlines() if line.split("=")[0].strip() not in keys]
    return "\n".join(kept) + "\n" + given


def write_task(
    root: Path,
    *,
    solve: str = "true",
    test: str = "echo 1 > /logs/verifier/reward.txt",
    dockerfile: str = f"FROM {BASE_IMAGE}\nWORKDIR /app\n",
    top: str = "",
    verifier: str = "",
    agent: str = "",
    environment: str = "",
) -> Path:
    files = {
        "task.toml": TOML.format(
            top=top,
            verifier=_with("timeout_sec = 30", verifier),
            agent=_with("timeout_sec = 30", agent),
            environment=_with("cpus = 1\nmemory_mb = 512", environment),
        ),
        "instruction.md": "Do the thing.\n",
        "environment/Dockerfile": dockerfile,
        "solution/solve.sh": f"#!/bin/bash\n{solve}\n",
        "tests/test.sh": f"#!/bin/bash\n{test}\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
