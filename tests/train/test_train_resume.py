"""Training killed like a machine failure (SIGKILL, no cleanup) resumes after its last finished step and never
trains a finished step again: the job on its own, and inside a two-round ``trl-grpo`` flywheel whose second round
solves with the first round's adapter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autoenvscaling.train.job import TrainJob, run_job
from autoenvscaling.train.progress import CHECKPOINTS, ROLLOUTS, STEPS
from autoenvscaling.train.settings import TrainSettings
from docker_helpers import containers_of

pytest.importorskip("trl")
pytestmark = [
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::FutureWarning:(transformers|peft|trl)"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:(transformers|peft|trl|torch)"),
]

REPO = Path(__file__).resolve().parents[2]
TINY = {"steps": 2, "prompts_per_step": 1, "max_completion_length": 16, "lora_r": 4}

# The job as `python -m autoenvscaling.train` runs it, plus a trainer callback that SIGKILLs the process right
# after the first checkpoint is saved: the moment a machine failure costs the most without losing a step.
_KILLED_AFTER_FIRST_SAVE = """
import os, signal, sys
import autoenvscaling.train.grpo as grpo
from autoenvscaling.train.job import main

real = grpo.step_callback

def killing(path):
    steps = real(path)

    class KillAfterFirstSave(type(steps)):
        def on_save(self, args, state, control, **kw):
            if state.global_step == 1:
                os.kill(os.getpid(), signal.SIGKILL)

    return KillAfterFirstSave()

grpo.step_callback = killing
sys.exit(main([sys.argv[1]]))
"""


def _steps_logged(out: Path) -> list[int]:
    return [json.loads(line)["step"] for line in (out / STEPS).read_text().splitlines() if line.strip()]


def _rollouts(out: Path) -> set[str]:
    return {p.name for p in (out / ROLLOUTS).iterdir()} if (out / ROLLOUTS).is_dir() else set()


def test_a_job_killed_after_its_first_step_resumes_from_it(tmp_path: Path, export_dir: Path) -> None:
    out, run_id = tmp_path / "train", f"train-resume-{uuid.uuid4().hex[:8]}"
    job = TrainJob(kind="trl-grpo", settings=TrainSettings(**TINY), export_dir=str(export_dir), out_dir=str(out),
                   base_model="tiny", run_id=run_id)  # fmt: skip
    out.mkdir()
    (out / "job.json").write_text(job.model_dump_json(), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", _KILLED_AFTER_FIRST_SAVE, str(out / "job.json")],
                          capture_output=True, text=True, timeout=900, check=False)  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    assert _steps_logged(out) == [1] and not (out / "result.json").exists()
    assert (out / CHECKPOINTS / "checkpoint-1").is_dir()
    first_rollouts = _rollouts(out)
    assert first_rollouts  # step 1's rollouts ran in the sandbox

    # Resumed in this process, the tiny base rebuilt from the same seed as the job's first run built it.
    result = run_job(TrainJob.model_validate_json((out / "job.json").read_text()))
    assert result.resumed_from is not None and result.resumed_from.endswith("checkpoint-1")
    assert result.steps == 2 and [s.step for s in result.log] == [1, 2]
    assert _steps_logged(out) == [1, 2]  # step 1 was not trained (nor logged) again
    second = _rollouts(out) - first_rollouts
    assert second and len(second) == len(first_rollouts)  # exactly one more step's rollouts
    assert not containers_of(run_id)


def _autoenv(log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:  # the child keeps its own copy of the file
        return subprocess.Popen([sys.executable, "-m", "autoenvscaling.cli", *args], stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip


@pytest.mark.timeout(2700)  # its own waits allow 900 s to the first checkpoint and 1800 s to finish
def test_two_trl_grpo_rounds_killed_in_training_resume_and_round_two_solves_with_the_adapter(tmp_path: Path) -> None:
    run = tmp_path / "fw"
    overrides = ["train.kind=trl-grpo", "train.base_model=tiny", "train.steps=2", "train.prompts_per_step=1",
                 "train.max_completion_length=16", "train.lora_r=4", "eval.attempts=1"]  # fmt: skip
    log = tmp_path / "first-run.log"
    proc = _autoenv(log, "flywheel", "run", "--config", str(REPO / "examples/flywheel/scripted.toml"), "--run-dir",
                    str(run), *overrides)  # fmt: skip
    train = run / "rounds" / "1" / "train"
    deadline = time.monotonic() + 900
    try:
        while not (train / CHECKPOINTS / "checkpoint-1" / "trainer_state.json").is_file():
            assert proc.poll() is None, f"ended before training: {log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, "no first checkpoint in 900 s"
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the flywheel and its training child, as a machine failure ends them
        proc.wait()
    assert _steps_logged(train) == [1]

    done = subprocess.run([sys.executable, "-m", "autoenvscaling.cli", "flywheel", "resume", str(run)],
                          capture_output=True, text=True, timeout=1800, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((train / "result.json").read_text())
    assert result["resumed_from"].endswith("checkpoint-1") and result["steps"] == 2
    assert _steps_logged(train) == [1, 2]

    out1 = json.loads((train / "output.json").read_text())
    adapter = out1["adapter_dir"]
    assert out1["solver"]["name"] == f"hf:{adapter}"
    solve2 = json.loads((run / "rounds" / "2" / "solve" / "output.json").read_text())
    assert solve2["solver"] == f"hf:{adapter}"  # round 2 solves with round 1's adapter
    r1, r2 = (json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines())
    assert r1["round"] == 1 and r2["round"] == 2
    assert not containers_of(run.name)
