"""Work off a trial's critical path, results unchanged: a separate verifier's sandbox starts while the agent works
(only where the agent's container cannot reach it), the artifacts go in after the agent phase, the agent's
sandbox is gone before the tests run, and nothing is left behind on any path (a failed agent phase, Ctrl-C)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from autoenvscaling.sandbox.base import Sandbox, SandboxBackend, SandboxError, SandboxSpec
from autoenvscaling.sandbox.fake import FakeBackend, FakeCall, FakeSandbox
from autoenvscaling.tasks import Task, load_task
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.results import AgentContext, AgentInfo, TrialResult
from autoenvscaling.verify.trial import TrialOptions, TrialRunner
from autoenvscaling.verify.trial_agents import OracleAgent, TrialAgent
from docker_helpers import containers_of

TOML = """\
schema_version = "1.4"
artifacts = ["/app/out.txt"]
[verifier]
timeout_sec = 60
environment_mode = "{mode}"
[agent]
timeout_sec = 60
[environment]
workdir = "/app"
cpus = 1
memory_mb = 512
{extra}
"""
SOLVE = "echo done > /app/out.txt; echo junk > /app/other.txt"
TEST = (
    '[ "$(cat /app/out.txt)" = done ] && [ ! -e /app/other.txt ] && echo 1 > /logs/verifier/reward.txt'
    " || echo 0 > /logs/verifier/reward.txt"
)


def _task(root: Path, *, mode: str = "separate", extra: str = "", solve: str = SOLVE) -> Path:
    files = {
        "task.toml": TOML.format(mode=mode, extra=extra),
        "instruction.md": "Write done to /app/out.txt.\n",
        "environment/Dockerfile": "FROM autoenv/terminal:latest\nWORKDIR /app\n",
        "solution/solve.sh": f"#!/bin/bash\n{solve}\n",
        "tests/test.sh": f"#!/bin/bash\n{TEST}\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _wait(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _is_verifier(sb: FakeSandbox) -> bool:
    return sb.spec.name_hint.endswith("__verifier")


class _Seen:
    """What the agent phase and the tests saw of the fake backend's sandboxes."""

    def __init__(self) -> None:
        self.verifier_during_agent: FakeSandbox | None = None
        self.artifact_during_agent: bool | None = None
        self.at_tests: dict[str, object] = {}


def _fake(seen: _Seen, *, own_processes: bool = False) -> FakeBackend:
    class Backend(FakeBackend):
        def runs_own_processes(self, spec: SandboxSpec) -> bool:
            return own_processes

    backend = Backend()

    def solve(sb: FakeSandbox, call: FakeCall) -> None:
        sb.write_file("/app/out.txt", "done\n")
        sb.write_file("/app/other.txt", "junk\n")

    def test(sb: FakeSandbox, call: FakeCall) -> None:
        agent = [s for s in backend.sandboxes if not _is_verifier(s)]
        seen.at_tests = {"sandbox": sb, "agent_running": any(s.running for s in agent)}
        ok = sb.is_file("/app/out.txt") and not sb.is_file("/app/other.txt")
        sb.write_file("/logs/verifier/reward.txt", "1" if ok else "0")

    backend.register(r"/solution/solve\.sh", solve)
    backend.register(r"/tests/test\.sh", test)
    return backend


class _WatchingAgent(OracleAgent):
    """The oracle, which first waits (a little) for a verifier sandbox to be running and notes what it holds."""

    def __init__(self, backend: FakeBackend, seen: _Seen, *, wait: float = 5.0, fail: BaseException | None = None):
        super().__init__()
        self.backend, self.seen, self.wait, self.fail = backend, seen, wait, fail

    def run(self, sandbox: Sandbox, task: Task, agent_dir: Path, timeout_sec: float | None) -> AgentContext:
        def verifier() -> FakeSandbox | None:
            return next((s for s in self.backend.sandboxes if _is_verifier(s) and s.running), None)

        _wait(lambda: verifier() is not None, self.wait)
        found = verifier()
        self.seen.verifier_during_agent = found
        if found is not None:
            self.seen.artifact_during_agent = found.is_file("/app/out.txt")
        if self.fail is not None:
            raise self.fail
        return super().run(sandbox, task, agent_dir, timeout_sec)


def _run(
    backend: SandboxBackend, root: Path, agent: TrialAgent, trial: Path, options: TrialOptions | None = None
) -> TrialResult:
    runner = TrialRunner(backend, EnvironmentBuilder(backend), prewarm=False, options=options)
    try:
        return runner.run(load_task(root), agent, trial)
    finally:
        runner.close()


def test_separate_verifier_starts_during_the_agent_phase_and_grades_the_same(tmp_path: Path) -> None:
    root = _task(tmp_path / "t")
    rewards = {}
    for prestart in (True, False):
        seen = _Seen()
        backend = _fake(seen)
        agent = _WatchingAgent(backend, seen, wait=5.0 if prestart else 0.2)
        res = _run(
            backend, root, agent, tmp_path / f"trial-{prestart}", options=TrialOptions(prestart_verifier=prestart)
        )
        assert res.exception_info is None, res.exception_info
        rewards[prestart] = res.reward
        assert seen.at_tests["agent_running"] is False  # the agent's sandbox is gone before the tests run
        assert len(backend.sandboxes) == 2 and not any(s.running for s in backend.sandboxes)
        if prestart:
            assert seen.verifier_during_agent is seen.at_tests["sandbox"]  # the one started early graded
            assert seen.artifact_during_agent is False  # the artifacts went in only after the agent phase
        else:
            assert seen.verifier_during_agent is None
    assert rewards == {True: 1.0, False: 1.0}


def test_no_early_start_where_the_agent_could_reach_a_listening_sandbox(tmp_path: Path) -> None:
    root = _task(tmp_path / "t")
    seen = _Seen()
    backend = _fake(seen, own_processes=True)  # an ENTRYPOINT, say; both phases have a network
    res = _run(backend, root, _WatchingAgent(backend, seen, wait=0.5), tmp_path / "trial")
    assert res.reward == 1.0 and seen.verifier_during_agent is None

    no_net = _task(tmp_path / "no-net", extra='network_mode = "no-network"')  # nothing joins the two: early is fine
    seen = _Seen()
    backend = _fake(seen, own_processes=True)
    res = _run(backend, no_net, _WatchingAgent(backend, seen), tmp_path / "trial-no-net")
    assert res.reward == 1.0 and seen.verifier_during_agent is seen.at_tests["sandbox"]


def test_a_failed_agent_phase_leaves_no_sandbox(tmp_path: Path) -> None:
    root = _task(tmp_path / "t")
    seen = _Seen()
    backend = _fake(seen)
    runner = TrialRunner(backend, EnvironmentBuilder(backend), prewarm=False)
    agent = _WatchingAgent(backend, seen, fail=RuntimeError("the agent broke"))
    res = runner.run(load_task(root), agent, tmp_path / "trial")
    assert res.exception_info is not None and res.exception_info.exception_type == "RuntimeError"
    assert res.verifier_result is None and seen.verifier_during_agent is not None
    assert len(backend.sandboxes) == 2 and not any(s.running for s in backend.sandboxes)  # the early one too
    runner.close()


def test_ctrl_c_removes_everything_before_run_returns(tmp_path: Path) -> None:
    root = _task(tmp_path / "t")
    seen = _Seen()
    backend = _fake(seen)
    runner = TrialRunner(backend, EnvironmentBuilder(backend), prewarm=False)
    agent = _WatchingAgent(backend, seen, fail=KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        runner.run(load_task(root), agent, tmp_path / "trial")
    assert seen.verifier_during_agent is not None
    assert len(backend.sandboxes) == 2 and not any(s.running for s in backend.sandboxes)
    runner.close()


def _gated_stops(backend: FakeBackend, gate: threading.Event, *, fail: bool = False) -> FakeBackend:
    """Every sandbox's removal waits for ``gate`` (and then fails, with ``fail``)."""
    create = backend.create

    def gated(spec: SandboxSpec) -> FakeSandbox:
        sb = create(spec)
        stop = sb.stop

        def slow_stop() -> None:
            assert gate.wait(10), "the removal was never let through"
            if fail:
                raise SandboxError("the engine refused to remove it")
            stop()

        sb.stop = slow_stop  # type: ignore[method-assign]
        return sb

    backend.create = gated  # type: ignore[method-assign]
    return backend


def test_removal_in_the_background_writes_the_result_first_and_close_waits(tmp_path: Path) -> None:
    root = _task(tmp_path / "t", mode="shared")
    gate = threading.Event()
    backend = _gated_stops(_fake(_Seen()), gate)
    runner = TrialRunner(
        backend, EnvironmentBuilder(backend), prewarm=False, options=TrialOptions(remove_in_background=True)
    )
    res = runner.run(load_task(root), OracleAgent(), tmp_path / "trial")  # returns with the removal pending
    assert res.reward is not None and res.exception_info is None  # graded (0 here: shared mode keeps other.txt)
    assert (tmp_path / "trial" / "result.json").is_file()
    assert [s.running for s in backend.sandboxes] == [True]
    closing = threading.Thread(target=runner.close)
    closing.start()
    time.sleep(0.2)
    assert closing.is_alive()  # close() waits for the removal in flight
    gate.set()
    closing.join(10)
    assert not closing.is_alive() and [s.running for s in backend.sandboxes] == [False]


def test_a_failed_background_removal_is_logged_not_the_trial_s_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = _task(tmp_path / "t", mode="shared")
    for background in (False, True):
        gate = threading.Event()
        gate.set()
        backend = _gated_stops(_fake(_Seen()), gate, fail=True)
        options = TrialOptions(remove_in_background=background)
        runner = TrialRunner(backend, EnvironmentBuilder(backend), prewarm=False, options=options)
        res = runner.run(load_task(root), OracleAgent(), tmp_path / f"trial-{background}")
        runner.close()
        assert res.reward is not None  # graded before the removal either way
        if background:  # the verdict was written before the removal; the container is gc's
            assert res.exception_info is None
            assert runner.reaper is not None and len(runner.reaper.failures) == 1
            assert "autoenv sandbox gc" in caplog.text
        else:  # inline, the trial waits for the removal, and its failure is the trial's error
            assert res.exception_info is not None and res.exception_info.exception_type == "SandboxError"


def test_background_removal_takes_an_unused_early_verifier_too(tmp_path: Path) -> None:
    root = _task(tmp_path / "t")
    seen = _Seen()
    backend = _fake(seen)
    options = TrialOptions(remove_in_background=True)
    runner = TrialRunner(backend, EnvironmentBuilder(backend), prewarm=False, options=options)
    agent = _WatchingAgent(backend, seen, fail=RuntimeError("the agent broke"))
    res = runner.run(load_task(root), agent, tmp_path / "trial")
    runner.close()
    assert res.exception_info is not None and seen.verifier_during_agent is not None
    assert len(backend.sandboxes) == 2 and not any(s.running for s in backend.sandboxes)


# -- the same on Docker ----------------------------------------------------------------------------------------


class _FailingAgent:
    """Waits until both of the trial's containers run (the early verifier's too), then fails."""

    info = AgentInfo(name="failing")

    def __init__(self, run_id: str, fail: BaseException) -> None:
        self.run_id, self.fail, self.saw = run_id, fail, 0

    def setup(self, sandbox: Sandbox, task: Task) -> None:
        return None

    def run(self, sandbox: Sandbox, task: Task, agent_dir: Path, timeout_sec: float | None) -> AgentContext:
        _wait(lambda: len(containers_of(self.run_id)) == 2, 120)  # a loaded engine's shell start can take 30 s
        self.saw = len(containers_of(self.run_id))
        raise self.fail


@pytest.mark.docker
def test_docker_separate_trial_same_reward_with_and_without_early_start(
    docker_backend: SandboxBackend, tmp_path: Path
) -> None:
    root = _task(tmp_path / "t", solve=SOLVE)
    for prestart in (True, False):
        run_id = f"overlap-{uuid.uuid4().hex[:8]}"
        options = TrialOptions(prestart_verifier=prestart)
        runner = TrialRunner(docker_backend, EnvironmentBuilder(docker_backend), run_id, prewarm=False, options=options)
        try:
            res = runner.run(load_task(root), OracleAgent(), tmp_path / f"trial-{prestart}")
            assert res.exception_info is None, res.exception_info
            assert res.reward == 1.0  # out.txt came over, other.txt did not: a fresh container either way
            assert containers_of(run_id) == []
        finally:
            runner.close()
    broken = _task(tmp_path / "broken", solve="echo nope > /app/out.txt")
    runner = TrialRunner(docker_backend, EnvironmentBuilder(docker_backend), prewarm=False)
    try:
        assert runner.run(load_task(broken), OracleAgent(), tmp_path / "trial-broken").reward == 0.0
    finally:
        runner.close()


@pytest.mark.docker
def test_docker_failed_agent_phase_leaves_no_container(docker_backend: SandboxBackend, tmp_path: Path) -> None:
    run_id = f"overlap-{uuid.uuid4().hex[:8]}"
    runner = TrialRunner(docker_backend, EnvironmentBuilder(docker_backend), run_id, prewarm=False)
    agent = _FailingAgent(run_id, RuntimeError("the agent broke"))
    try:
        res = runner.run(load_task(_task(tmp_path / "t")), agent, tmp_path / "trial")
        assert res.exception_info is not None and res.exception_info.exception_type == "RuntimeError"
        assert agent.saw == 2  # the verifier's container had started early
        assert containers_of(run_id) == []
    finally:
        runner.close()


@pytest.mark.docker
def test_docker_ctrl_c_leaves_no_container(docker_backend: SandboxBackend, tmp_path: Path) -> None:
    run_id = f"overlap-{uuid.uuid4().hex[:8]}"
    runner = TrialRunner(docker_backend, EnvironmentBuilder(docker_backend), run_id, prewarm=False)
    agent = _FailingAgent(run_id, KeyboardInterrupt())
    try:
        with pytest.raises(KeyboardInterrupt):
            runner.run(load_task(_task(tmp_path / "t")), agent, tmp_path / "trial")
        assert agent.saw == 2
        assert containers_of(run_id) == []  # removed before run() re-raised
    finally:
        runner.close()


@pytest.mark.docker
def test_docker_removal_in_the_background_leaves_no_container_after_close(
    docker_backend: SandboxBackend, tmp_path: Path
) -> None:
    run_id = f"overlap-{uuid.uuid4().hex[:8]}"
    options = TrialOptions(remove_in_background=True)
    runner = TrialRunner(docker_backend, EnvironmentBuilder(docker_backend), run_id, options=options)
    try:
        task = load_task(_task(tmp_path / "t"))
        rewards = [
            runner.run(task, OracleAgent(), tmp_path / f"trial-{i}", prewarm_next=i == 0).reward for i in range(2)
        ]
        assert rewards == [1.0, 1.0]
    finally:
        runner.close()
    assert containers_of(run_id) == []
