"""kill -9 in the middle of a validation run: `autoenv sandbox gc` removes what it left, `--resume` finishes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docker_helpers import containers_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
AUTOENV = [sys.executable, "-m", "autoenvscaling.cli"]


def test_kill_gc_resume(tmp_path: Path) -> None:
    tasks = [str(EXAMPLES / "terminal" / "log-error-summary"), str(EXAMPLES / "terminal" / "ini-to-json")]
    run_dir = tmp_path / "validate-crash"
    cmd = [*AUTOENV, "validate", *tasks, "--run-dir", str(run_dir), "--repeats", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not containers_of(run_dir.name):  # wait until a trial container is up
            assert proc.poll() is None, "validation finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert containers_of(run_dir.name), "the killed run should have left its container behind"

    gc = subprocess.run([*AUTOENV, "sandbox", "gc", "--run", run_dir.name], capture_output=True, text=True)
    assert gc.returncode == 0, gc.stderr
    assert containers_of(run_dir.name) == []

    resumed = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    lines = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    assert sorted(x["task_path"] for x in lines) == sorted(tasks)  # each task exactly once
    assert all(x["verdict"] == "valid" for x in lines)
    assert containers_of(run_dir.name) == []
