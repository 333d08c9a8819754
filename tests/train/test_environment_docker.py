"""The TRL environment over the Docker sandbox: the oracle's commands score 1, nothing scores 0, and no
rollout leaves a container behind (scored, abandoned by a new reset, failed, closed, or a process that exits
without closing)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autoenvscaling.sandbox.base import SandboxBackend
from autoenvscaling.train.environment import RolloutSettings, TaskEnvFactory
from autoenvscaling.train.rows import load_rows
from docker_helpers import containers_of

pytestmark = pytest.mark.docker

SEED_TASK = Path(__file__).resolve().parents[2] / "examples" / "flywheel" / "tasks" / "seed-count-words"


def _settles_at(run_id: str, count: int, timeout: float = 60.0) -> bool:
    """Whether the run's containers come to ``count`` (a separate verifier's starts in the background)."""
    deadline = time.monotonic() + timeout
    while len(containers_of(run_id)) != count:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_oracle_commands_score_one_and_nothing_scores_zero(
    export_dir: Path, docker_backend: SandboxBackend, tmp_path: Path
) -> None:
    rows = load_rows(export_dir).rows
    assert [r.task_name for r in rows] == ["autoenv/seed-count-words"] and rows[0].env_id
    run_id = f"train-test-{uuid.uuid4().hex[:8]}"
    with TaskEnvFactory(docker_backend, tmp_path / "rollouts", run_id=run_id) as factory:
        env = factory()
        prompt = env.reset(**rows[0].model_dump())
        assert "words" in prompt and "`bash` tool" in prompt
        assert env.bash("cd /tmp && export N=1").endswith("[exit code 0]")
        assert env.bash("pwd; echo N=$N") == "/app\nN=\n[exit code 0]"  # a fresh shell per call, as the solver's
        assert env.bash("wc -w < text.txt > words.txt").endswith("[exit code 0]")
        assert env.bash("false").endswith("[exit code 1]")
        assert env.get_reward() == 1.0
        assert env.get_reward() == 1.0  # scored once
        assert containers_of(run_id) == []
        trial = env.trial_result
        assert trial is not None and trial.agent_result is not None
        assert trial.agent_result.metadata["commands"] == 4

        env.reset(**rows[0].model_dump())
        assert env.get_reward() == 0.0  # the do-nothing rollout
        with pytest.raises(RuntimeError, match="no task is running"):
            env.bash("true")
    assert containers_of(run_id) == []


def test_abandoned_and_failed_rollouts_leave_no_container(
    export_dir: Path, docker_backend: SandboxBackend, tmp_path: Path
) -> None:
    rows = load_rows(export_dir).rows
    run_id = f"train-test-{uuid.uuid4().hex[:8]}"
    settings = RolloutSettings(command_timeout_sec=1, output_chars=200)
    factory = TaskEnvFactory(docker_backend, tmp_path / "rollouts", run_id=run_id, settings=settings)
    try:
        first, second = factory(), factory()
        first.reset(**rows[0].model_dump())
        second.reset(**rows[0].model_dump())
        out = first.bash("seq 1 100000; sleep 5")
        assert "characters omitted" in out and "[timed out after 1 s]" in out
        assert _settles_at(run_id, 4)  # per rollout the agent's container and its separate verifier's, started early
        first.reset(**rows[0].model_dump())  # the previous rollout was never scored: aborted, containers removed
        aborted = first.trial_result
        assert aborted is not None and aborted.is_error
        assert aborted.exception_info is not None and "abandoned" in aborted.exception_info.exception_message
        first.bash("true")
        assert _settles_at(run_id, 4)  # the aborted rollout's two are gone, the new rollout has its two again
        raise KeyboardInterrupt  # a training step that dies mid-rollout
    except KeyboardInterrupt:
        pass
    finally:
        factory.close()
    assert containers_of(run_id) == []
    assert second.get_reward() is None  # closed before it was scored: an error, not a 0


def test_a_task_that_cannot_start_is_an_error_not_a_zero(docker_backend: SandboxBackend, tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "no-image"
    shutil.copytree(SEED_TASK, task)
    (task / "environment" / "Dockerfile").write_text("FROM autoenv/no-such-image:0\nWORKDIR /app\n")
    rows = load_rows(tmp_path / "tasks").rows
    run_id = f"train-test-{uuid.uuid4().hex[:8]}"
    with TaskEnvFactory(docker_backend, tmp_path / "rollouts", run_id=run_id) as factory:
        env = factory()
        env.reset(**rows[0].model_dump())
        with pytest.raises(RuntimeError, match="the container did not start: BuildError"):
            env.bash("true")
        assert env.get_reward() is None
    assert containers_of(run_id) == []


# A trainer process that scores one rollout, leaves the next one open and exits without closing the factory.
_EXITS_WITHOUT_CLOSE = """
import sys
from pathlib import Path
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.train.environment import TaskEnvFactory
from autoenvscaling.train.rows import load_rows

row = load_rows(Path(sys.argv[1])).rows[0].model_dump()
factory = TaskEnvFactory(DockerBackend(), Path(sys.argv[2]), run_id=sys.argv[3])
env = factory()
env.reset(**row)
env.bash("wc -w < text.txt > words.txt")
assert env.get_reward() == 1.0
env.reset(**row)
env.bash("true")  # open: the agent's container up, the verifier's starting
print("exiting", flush=True)
"""


def test_exit_without_close_leaves_no_container(export_dir: Path, tmp_path: Path) -> None:
    run_id = f"train-test-{uuid.uuid4().hex[:8]}"
    proc = subprocess.run([sys.executable, "-c", _EXITS_WITHOUT_CLOSE, str(export_dir), str(tmp_path / "rollouts"),
                           run_id], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0 and "exiting" in proc.stdout, proc.stdout + proc.stderr
    assert containers_of(run_id) == []  # the open rollout's two (its verifier's started early) removed at exit
