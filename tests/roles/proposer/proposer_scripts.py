"""Scripted proposer replies shared by the tests: a small new task, written with shell heredocs."""

from __future__ import annotations

import json


def bash(cmd: str, thought: str = "Next step.") -> str:
    return f"{thought}\n```bash\n{cmd}\n```"


INSTRUCTION = (
    "The file /app/data/numbers.txt holds one integer per line.\n\n"
    "Write the sum of all the integers to /app/sum.txt, as a single line holding just the number.\n"
)
DOCKERFILE = "FROM autoenv/terminal:latest\nWORKDIR /app\nCOPY numbers.txt /app/data/numbers.txt\n"
NUMBERS = "3\n5\n7\n11\n"
SOLVE = "#!/bin/bash\nset -euo pipefail\nawk '{s += $1} END {print s}' /app/data/numbers.txt > /app/sum.txt\n"
TEST_PY = (
    "from pathlib import Path\n\n\n"
    "def test_sum() -> None:\n"
    '    assert Path("/app/sum.txt").read_text().strip() == "26"\n'
)
# Broken on purpose: runs the tests but never writes the reward file.
TEST_SH_BROKEN = "#!/bin/bash\npython3 -m pytest -q -p no:cacheprovider /tests/test_outputs.py && echo PASSED\n"
TEST_SH = (
    "#!/bin/bash\nmkdir -p /logs/verifier\n"
    "if python3 -m pytest -q -p no:cacheprovider /tests/test_outputs.py; then\n"
    "  echo 1 > /logs/verifier/reward.txt\nelse\n  echo 0 > /logs/verifier/reward.txt\nfi\n"
)


def heredoc(path: str, text: str) -> str:
    return f"cat > {path} <<'EOF'\n{text}EOF"


def write_task_command(test_sh: str) -> str:
    """One workshop command that turns the template draft into the sum task."""
    t = "/workshop/task"
    return "\n".join(
        [
            f"rm -rf {t}/environment/data && mkdir -p {t}/environment {t}/solution {t}/tests",
            # The verifier's fresh container holds only the declared artifacts: declare the new output.
            f'sed -i \'s#"/app/output.txt"#"/app/sum.txt"#\' {t}/task.toml',
            heredoc(f"{t}/instruction.md", INSTRUCTION),
            heredoc(f"{t}/environment/Dockerfile", DOCKERFILE),
            heredoc(f"{t}/environment/numbers.txt", NUMBERS),
            heredoc(f"{t}/solution/solve.sh", SOLVE),
            heredoc(f"{t}/tests/test_outputs.py", TEST_PY),
            heredoc(f"{t}/tests/test.sh", test_sh),
        ]
    )


def prompt_reply(test_sh: str = TEST_SH) -> str:
    """A prompt-only reply (JSON) for the same task."""
    return json.dumps(
        {
            "name": "sum-numbers",
            "description": "Sum the integers of a file.",
            "difficulty": "easy",
            "instruction": INSTRUCTION,
            "dockerfile": DOCKERFILE,
            "environment_files": [{"path": "numbers.txt", "content": NUMBERS}],
            "solve_sh": SOLVE,
            "test_sh": test_sh,
            "test_files": [{"path": "test_outputs.py", "content": TEST_PY}],
        }
    )
