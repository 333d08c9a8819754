"""Write a staged draft as a Harbor task dir: the parent's environment (with the files the harness adds to it,
e.g. a ``combine`` child's second-parent inputs), the model's files, the harness's tests."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import tomli_w

from autoenvscaling.roles.proposer.novelty import harness_test_code
from autoenvscaling.roles.proposer.staged.spec import DraftFiles, Expectation

TEST_SH = """#!/bin/bash
# Runs the hidden tests and writes the reward: 1 when all pass, else 0.
mkdir -p /logs/verifier
if python3 -m pytest -q -p no:cacheprovider /tests/test_outputs.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
STAGED_MARKER = "recorded"  # [metadata].expectations of an environment whose tests hold recorded outputs


def _text(content: str) -> str:
    return content if content.endswith("\n") else content + "\n"


def write_draft(
    dest: Path,
    *,
    parent: Path,
    files: DraftFiles,
    name: str,
    description: str,
    category: str,
    outputs: list[str],
    expectations: list[Expectation] | None = None,
    expected: dict[str, str] | None = None,
    lineage: dict[str, str] | None = None,
) -> Path:
    """A task dir at ``dest``. Without ``expectations`` the tests dir is left out (a draft to observe)."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(parent / "environment", dest / "environment", symlinks=False)
    env_dir = (dest / "environment").resolve()
    for rel, content in {**files.added, **files.data}.items():  # a changed input wins over an added one
        target = (env_dir / rel).resolve()
        if not target.is_relative_to(env_dir) or target == env_dir:
            raise ValueError(f"input file {rel!r} would land outside environment/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_text(content), encoding="utf-8")
    (dest / "instruction.md").write_text(_text(files.instruction.strip()), encoding="utf-8")
    solve = dest / "solution" / "solve.sh"
    solve.parent.mkdir(parents=True, exist_ok=True)
    body = files.solve_sh.strip()
    solve.write_text(_text(body if body.startswith("#!") else "#!/bin/bash\n" + body), encoding="utf-8")
    os.chmod(solve, 0o755)
    config = {
        "schema_version": "1.4",
        "artifacts": list(outputs),
        "task": {"name": f"autoenv/{name}", "description": description},
        "metadata": {
            "difficulty": "easy",
            "category": category,
            "tags": ["generated", "staged"],
            "expectations": STAGED_MARKER,
            **({"lineage": lineage} if lineage else {}),
        },
        # The tests read only the declared output: they run in a fresh container holding just that file.
        "verifier": {"timeout_sec": 120, "environment_mode": "separate"},
        "agent": {"timeout_sec": 600},
        "environment": {"build_timeout_sec": 600, "cpus": 1, "memory_mb": 1024},
    }
    (dest / "task.toml").write_text(tomli_w.dumps(config), encoding="utf-8")
    if expectations is not None:
        tests = dest / "tests"
        (tests / "expected").mkdir(parents=True, exist_ok=True)
        (tests / "test.sh").write_text(TEST_SH, encoding="utf-8")
        os.chmod(tests / "test.sh", 0o755)
        (tests / "test_outputs.py").write_text(harness_test_code(), encoding="utf-8")
        rows = [e.model_dump(include={"path", "expected", "compare"}) for e in expectations]
        (tests / "expectations.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        for e in expectations:
            (tests / "expected" / e.expected).write_text((expected or {})[e.path], encoding="utf-8")
    return dest


def is_recorded(task_dir: Path) -> bool:
    """Whether ``task_dir``'s tests compare with recorded outputs (so it needs a blind reproduction)."""
    import tomllib

    try:
        data = tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return False
    meta = data.get("metadata")
    return isinstance(meta, dict) and meta.get("expectations") == STAGED_MARKER
