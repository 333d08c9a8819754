"""Findings 3, 4 and 9: limits apply when task.toml is silent, bad limits are one-line errors naming the field,
a phase cannot outlive its limit (watchdog), and the network policy is honoured or refused, never widened."""

from __future__ import annotations

import time
from pathlib import Path

import docker
import pytest
from hostile import MakeTask

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import Sandbox, SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.tasks import Task, TaskFormatError, load_task
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.environment import EnvironmentBuilder, UnsupportedTaskError, check_supported
from autoenvscaling.verify.results import AgentContext, AgentInfo
from autoenvscaling.verify.trial import TrialOptions, TrialRunner
from autoenvscaling.verify.trial_agents import NopAgent, OracleAgent


def test_silent_task_gets_default_limits(make_task: MakeTask) -> None:
    root = make_task()
    (root / "task.toml").write_text('schema_version = "1.4"\n')
    task = load_task(root)
    spec = EnvironmentBuilder(FakeBackend()).spec_for(task, "img", name_hint="x")
    assert spec.cpus and spec.memory_mb and spec.pids_limit and spec.file_size_mb
    assert task.config.agent.timeout_sec > 0 and task.config.verifier.timeout_sec > 0


@pytest.mark.parametrize(
    ("section", "line", "field"),
    [
        ("agent", "timeout_sec = nan", "agent.timeout_sec"),
        ("agent", "timeout_sec = inf", "agent.timeout_sec"),
        ("agent", "timeout_sec = 0", "agent.timeout_sec"),
        ("verifier", "timeout_sec = -1", "verifier.timeout_sec"),
        ("environment", "build_timeout_sec = inf", "environment.build_timeout_sec"),
        ("environment", "storage_mb = 0", "environment.storage_mb"),
        ("environment", "memory_mb = -5", "environment.memory_mb"),
        ("verifier", 'environment_mode = "elsewhere"', "verifier.environment_mode"),
    ],
)
def test_bad_limits_are_one_line_errors(make_task: MakeTask, section: str, line: str, field: str) -> None:
    root = make_task(**{section: line})
    with pytest.raises(TaskFormatError) as err:
        load_task(root)
    assert field in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"agent": 'network_mode = "allowlist"'},
        {"agent": 'network_mode = "no-network"', "verifier": 'network_mode = "public"'},
    ],
)
def test_network_policy_is_never_silently_widened(make_task: MakeTask, kwargs: dict[str, str]) -> None:
    task = load_task(make_task(**kwargs))
    with pytest.raises(UnsupportedTaskError) as err:
        check_supported(task)
    assert "\n" not in str(err.value)


def test_drafts_run_without_network(make_task: MakeTask, tmp_path: Path) -> None:
    backend = FakeBackend()
    backend.register(r"/tests/test\.sh", lambda sb, call: sb.write_file("/logs/verifier/reward.txt", "1"))
    options = ValidationConfig(network=False).trial_options()
    runner = TrialRunner(backend, EnvironmentBuilder(backend), prewarm=False, options=options)
    runner.run(load_task(make_task(verifier='environment_mode = "separate"')), NopAgent(), tmp_path / "t")
    assert [sb.spec.network for sb in backend.sandboxes] == [False, False]


class _Stubborn:
    """An agent that ignores its timeout and keeps the sandbox busy."""

    info = AgentInfo(name="stubborn")

    def setup(self, sandbox: Sandbox, task: Task) -> None:
        return None

    def run(self, sandbox: Sandbox, task: Task, agent_dir: Path, timeout_sec: float | None) -> AgentContext:
        while True:
            sandbox.exec("sleep 0.05", timeout=None)


def test_watchdog_ends_a_phase_that_outlives_its_limit(make_task: MakeTask, tmp_path: Path) -> None:
    backend = FakeBackend()
    runner = TrialRunner(
        backend, EnvironmentBuilder(backend), prewarm=False, options=TrialOptions(watchdog_grace_sec=0.5)
    )
    t0 = time.monotonic()
    res = runner.run(load_task(make_task(agent="timeout_sec = 0.5")), _Stubborn(), tmp_path / "trial")
    assert time.monotonic() - t0 < 5
    assert res.exception_info is not None and res.exception_info.exception_type == "TrialWatchdogError"
    assert res.reward is None


@pytest.mark.docker
def test_container_is_limited_and_unprivileged(docker_backend: DockerBackend) -> None:
    spec = SandboxSpec(image=BASE_IMAGE, cpus=1, memory_mb=256, file_size_mb=1, network=False)
    with docker_backend.create(spec) as sb:
        attrs = docker.from_env().api.inspect_container(sb.container_id)["HostConfig"]
        assert attrs["NanoCpus"] == 1_000_000_000 and attrs["Memory"] == 256 * 1024 * 1024
        assert "no-new-privileges" in attrs["SecurityOpt"] and attrs["CapDrop"] == ["ALL"]
        big = sb.exec(
            "truncate -s 10G /tmp/big; echo rc=$?; dd if=/dev/zero of=/tmp/x bs=1M count=5; stat -c %s /tmp/x"
        )
        assert "rc=153" in big.stdout and "File size limit exceeded" in big.stderr  # killed by SIGXFSZ
        assert big.stdout.split()[-1] == str(1024 * 1024)
        caps = sb.exec("grep CapEff /proc/self/status").stdout.split()[-1]
        assert not int(caps, 16) & (1 << 13)  # CAP_NET_RAW


@pytest.mark.parametrize(
    ("info", "supported"),
    [
        ({"Driver": "overlay2", "DriverStatus": [["Backing Filesystem", "extfs"]]}, False),
        ({"Driver": "overlay2", "DriverStatus": [["Backing Filesystem", "xfs"]]}, True),
        ({"Driver": "vfs"}, False),
        ({"Driver": "btrfs"}, True),
    ],
)
def test_storage_quota_only_where_the_engine_enforces_it(info: dict[str, object], supported: bool) -> None:
    from autoenvscaling.sandbox.docker import storage_quota_supported

    assert storage_quota_supported(info) is supported


@pytest.mark.docker
def test_storage_mb_caps_files_on_any_engine(docker_backend: DockerBackend) -> None:
    spec = SandboxSpec(image=BASE_IMAGE, storage_mb=2, file_size_mb=2)
    with docker_backend.create(spec) as sb:
        res = sb.exec("dd if=/dev/zero of=/tmp/x bs=1M count=4; stat -c %s /tmp/x")
        assert res.stdout.split()[-1] == str(2 * 1024 * 1024)


@pytest.mark.docker
@pytest.mark.parametrize("mode", ["shared", "separate"])
def test_verifier_network_mode_is_honoured(
    make_task: MakeTask, docker_backend: DockerBackend, tmp_path: Path, mode: str
) -> None:
    root = make_task(
        solve="ls /sys/class/net > /logs/agent/nets",
        test='[ "$(ls /sys/class/net)" = lo ] && r=1 || r=0; echo $r > /logs/verifier/reward.txt',
        verifier=f'network_mode = "no-network"\nenvironment_mode = "{mode}"',
    )
    runner = TrialRunner(docker_backend, EnvironmentBuilder(docker_backend), prewarm=False)
    res = runner.run(load_task(root), OracleAgent(), tmp_path / "trial")
    assert res.exception_info is None, res.exception_info
    assert "eth0" in (tmp_path / "trial" / "agent" / "nets").read_text()  # the agent had the task's network
    assert res.reward == 1.0
