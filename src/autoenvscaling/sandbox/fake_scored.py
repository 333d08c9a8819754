"""A fake backend with the oracle's contract scripted, constructible by name on any process (a Ray worker).

``/solution/solve.sh`` marks the task solved; ``/tests/test.sh`` writes the reward: the number in the task's
``tests/reward_if_solved`` (default 1) when solved, else the one in ``tests/reward_if_unsolved`` (default 0),
after sleeping ``tests/sleep_sec`` seconds (default 0) to stand in for a trial's work. The leakage scan finds an
empty image. So a tiny task dir can be valid, let the nop agent pass, or fail its oracle, and the executor tests
and benchmarks need no Docker::

    autoenv validate TASKS --backend autoenvscaling.sandbox.fake_scored:ScoredFakeBackend
"""

from __future__ import annotations

import time
from pathlib import Path

from autoenvscaling.sandbox.base import ExecResult
from autoenvscaling.sandbox.fake import FakeBackend, FakeCall, FakeSandbox

NAME = "autoenvscaling.sandbox.fake_scored:ScoredFakeBackend"
_MARK = "/tmp/.aes-fake-solved"


def _number(sb: FakeSandbox, path: str, default: float) -> float:
    return float(sb.read_file(path).decode().strip()) if sb.is_file(path) else default


def _test(sb: FakeSandbox, _call: FakeCall) -> None:
    time.sleep(_number(sb, "/tests/sleep_sec", 0.0))
    if sb.is_file(_MARK):
        reward = _number(sb, "/tests/reward_if_solved", 1.0)
    else:
        reward = _number(sb, "/tests/reward_if_unsolved", 0.0)
    sb.write_file("/logs/verifier/reward.txt", f"{reward:g}")


def _empty_scan(_sb: FakeSandbox, call: FakeCall) -> ExecResult:
    """The leakage scan's ``find | xargs sha256sum; echo MARK${PIPESTATUS[0]},...``: no files, both exit 0."""
    return ExecResult(stdout=f"{call.match.group(1)}0,0\n")


class ScoredFakeBackend(FakeBackend):
    name = NAME

    def __init__(self) -> None:
        super().__init__()
        # runs of the scripts only, not the harness's `chmod ... /tests/test.sh` before them
        self.register(r"^(?!chmod).*/solution/solve\.sh", lambda sb, _call: sb.write_file(_MARK, ""))
        self.register(r"^(?!chmod).*/tests/test\.sh", _test)
        self.register(r"^find / -xdev .*; echo (\S+?)\$\{PIPESTATUS\[0\]\}", _empty_scan)


def write_scored_task(root: Path, *, solved: float = 1.0, unsolved: float = 0.0, sleep_sec: float = 0.0) -> Path:
    """A minimal Harbor task dir for this backend (the oracle scores ``solved``, a do-nothing agent ``unsolved``)."""
    files = {
        "task.toml": 'schema_version = "1.4"\n[environment]\nworkdir = "/app"\n',
        "instruction.md": "Mark the task solved.\n",
        "environment/Dockerfile": "FROM autoenv/base:bookworm\nWORKDIR /app\n",
        "solution/solve.sh": "#!/bin/bash\n# scripted by ScoredFakeBackend: marks the task solved\n",
        "tests/test.sh": "#!/bin/bash\n# scripted by ScoredFakeBackend: writes /logs/verifier/reward.txt\n",
        "tests/reward_if_solved": f"{solved:g}\n",
        "tests/reward_if_unsolved": f"{unsolved:g}\n",
        "tests/sleep_sec": f"{sleep_sec:g}\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root
