"""SIGTERM stops an ``autoenv`` command as Ctrl-C does: the run unwinds through its cleanup, so the containers of
the trials under way are removed, rather than the process ending at once and leaving them running."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docker_helpers import containers_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASK = Path(__file__).resolve().parents[2] / "examples" / "terminal" / "log-error-summary"


def test_sigterm_during_a_trial_removes_its_containers(tmp_path: Path) -> None:
    task = tmp_path / "slow-task"
    shutil.copytree(TASK, task)
    solve = task / "solution" / "solve.sh"
    solve.write_text(solve.read_text().replace("set -euo pipefail\n", "set -euo pipefail\nsleep 3\n", 1))
    run = tmp_path / "validate-sigterm"
    log = tmp_path / "out.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "autoenvscaling.cli", "validate", str(task), "-k", "3", "--run-dir", str(run)],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 600  # the first run builds the task's image
        while not containers_of(run.name):
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "no trial container in 600 s"
            time.sleep(0.1)
        time.sleep(1.0)  # inside the trial: the solution sleeps
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = log.read_text()
    assert code == 128 + signal.SIGTERM, said[-3000:]
    assert "terminated" in said and "Traceback" not in said
    assert containers_of(run.name) == [], said[-3000:]
