"""Finding 3, storage: without engine quotas, what a sandbox writes in all is capped, not only each file.

A hostile task writes many files, each below the per-file cap (RLIMIT_FSIZE), until the total passes
``[environment].storage_mb``: the sandbox is removed, and validation reports the task's fault (``storage-limit``,
invalid), as an out-of-memory solution would be; an engine that does not answer is never taken for an overflow."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import docker
import pytest
from hostile import MakeTask

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import SandboxError, SandboxSpec, StorageLimitError
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.sandbox.storage import MAX_INTERVAL_SEC, MB, MIN_INTERVAL_SEC, StorageWatch, next_interval
from autoenvscaling.tasks import load_task
from autoenvscaling.validate.report import STORAGE_LIMIT, Verdict
from autoenvscaling.validate.validator import TaskValidator, ValidationConfig
from autoenvscaling.verify.environment import DEFAULT_STORAGE_MB, EnvironmentBuilder
from autoenvscaling.verify.trial import TrialRunner
from autoenvscaling.verify.trial_agents import OracleAgent

CAP_MB = 20
# 64 KiB files, far below the per-file cap: only a cap on the total can stop this.
FILL_FOREVER = "mkdir -p /app/junk; i=0; while true; do head -c 65536 /dev/zero > /app/junk/f$i; i=$((i+1)); done"
FILL_BURST = "mkdir -p /app/junk; for i in $(seq 800); do head -c 65536 /dev/zero > /app/junk/f$i; done"


def test_poll_interval_shrinks_near_the_limit_and_grows_with_the_cost_of_measuring() -> None:
    assert next_interval(0, 10_240 * MB, 0.002) == MAX_INTERVAL_SEC
    assert next_interval(19 * MB, 20 * MB, 0.002) == MIN_INTERVAL_SEC
    assert next_interval(0, 10_240 * MB, 0.44) == pytest.approx(4.4)  # 100,000 files: the watcher backs off


def test_watch_fires_once_and_never_on_an_engine_error() -> None:
    readings: list[int | Exception] = [RuntimeError("engine down"), 5 * MB, 30 * MB, 40 * MB]
    fired: list[int] = []
    done = threading.Event()

    def measure() -> int | None:
        value = readings.pop(0) if readings else 50 * MB
        if isinstance(value, Exception):
            raise value
        return value

    def exceed(used: int) -> None:
        fired.append(used)
        done.set()

    watch = StorageWatch(measure, 20 * MB, exceed, name="unit")
    assert watch.check() is None  # the engine error: no overflow, and no safe period either
    assert watch.check() is None  # 5 MB: 15 MB of headroom, about 15 ms at the assumed write rate
    assert watch.measures == 2
    watch.start()
    assert done.wait(10)
    time.sleep(0.3)
    watch.stop()
    assert fired == [30 * MB] and watch.exceeded == 30 * MB
    assert watch.check() == 30 * MB and fired == [30 * MB]


def test_the_watch_ends_with_its_container() -> None:
    watch = StorageWatch(lambda: None, 20 * MB, lambda used: None, name="unit")
    watch.start()
    watch._thread.join(5)
    assert not watch._thread.is_alive() and watch.measures == 1 and watch.exceeded is None


def test_a_command_far_from_the_limit_costs_no_measure() -> None:
    watch = StorageWatch(lambda: 1 * MB, 10_240 * MB, lambda used: None, name="unit")
    assert watch.check() is None and watch.check() is None
    assert watch.measures == 1  # ~10 s of headroom at the assumed write rate: the second check is free


def test_every_task_gets_a_storage_cap(make_task: MakeTask) -> None:
    spec = EnvironmentBuilder(FakeBackend()).spec_for(load_task(make_task()), "img", name_hint="x")
    assert spec.storage_mb == DEFAULT_STORAGE_MB
    spec = EnvironmentBuilder(FakeBackend()).spec_for(
        load_task(make_task(environment=f"storage_mb = {CAP_MB}")), "img", name_hint="x"
    )
    assert spec.storage_mb == spec.file_size_mb == CAP_MB


def _used_mb(message: str) -> int:
    m = re.search(r"wrote (\d+) MB", message)
    assert m, message
    return int(m.group(1))


@pytest.mark.docker
@pytest.mark.parametrize("solve", [FILL_FOREVER, FILL_BURST], ids=["forever", "burst"])
def test_many_small_files_past_the_cap_stop_the_sandbox(
    make_task: MakeTask, docker_backend: DockerBackend, tmp_path: Path, solve: str
) -> None:
    if docker_backend.storage_quota:
        pytest.skip("this engine enforces storage_mb with a quota; the watch is not used")
    task = load_task(make_task(solve=solve, environment=f"storage_mb = {CAP_MB}"))
    runner = TrialRunner(docker_backend, EnvironmentBuilder(docker_backend), prewarm=False)
    t0 = time.monotonic()
    res = runner.run(task, OracleAgent(), tmp_path / "trial")
    assert time.monotonic() - t0 < 15  # not the 30 s agent timeout
    assert res.exception_info is not None and res.exception_info.exception_type == "StorageLimitError"
    assert res.reward is None and res.verifier is None  # never graded
    assert CAP_MB <= _used_mb(res.exception_info.exception_message) < CAP_MB + 100


@pytest.mark.docker
def test_validation_calls_a_disk_filling_task_invalid(
    make_task: MakeTask, docker_backend: DockerBackend, tmp_path: Path
) -> None:
    if docker_backend.storage_quota:
        pytest.skip("this engine enforces storage_mb with a quota; the watch is not used")
    config = ValidationConfig(repeats=1, run_nop=False, check_leakage=False)
    validator = TaskValidator(docker_backend, EnvironmentBuilder(docker_backend), config, tmp_path / "trials")
    try:
        hostile = validator.validate(make_task(solve=FILL_BURST, environment=f"storage_mb = {CAP_MB}"))
        fine = validator.validate(
            make_task(solve="head -c 5000000 /dev/zero > /app/out", environment=f"storage_mb = {CAP_MB}")
        )
    finally:
        validator.close()
    assert hostile.verdict == Verdict.INVALID and hostile.failed_checks == [STORAGE_LIMIT], hostile
    assert fine.verdict == Verdict.VALID, fine


@pytest.mark.docker
def test_a_container_removed_by_someone_else_is_an_error_not_an_overflow(docker_backend: DockerBackend) -> None:
    with docker_backend.create(SandboxSpec(image=BASE_IMAGE, storage_mb=CAP_MB)) as sb:
        assert sb.container_id is not None
        docker.from_env().api.remove_container(sb.container_id, force=True)
        with pytest.raises(SandboxError) as err:
            sb.exec("true")
        assert not isinstance(err.value, StorageLimitError)
