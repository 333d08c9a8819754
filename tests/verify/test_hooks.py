"""[environment.healthcheck], [steps.healthcheck] and [[verifier.collect]] run as Harbor 0.26 runs them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autoenvscaling.sandbox.base import ExecResult, SandboxSpec
from autoenvscaling.sandbox.fake import FakeBackend, FakeCall, FakeSandbox
from autoenvscaling.tasks import load_task
from autoenvscaling.tasks.config import HealthcheckConfig
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.errors import HealthcheckError
from autoenvscaling.verify.hooks import run_healthcheck
from autoenvscaling.verify.results import TrialResult
from autoenvscaling.verify.trial import TrialRunner
from autoenvscaling.verify.trial_agents import OracleAgent


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, sec: float) -> None:
        self.now += sec


def _probe(results: list[int]) -> tuple[FakeSandbox, list[int]]:
    """A sandbox whose `ready?` command exits with each of ``results`` in turn (then 0)."""
    backend = FakeBackend()
    left = list(results)
    backend.register(r"^ready\?", lambda sb, call: ExecResult(exit_code=left.pop(0) if left else 0))
    sb = backend.create(SandboxSpec(image="autoenv/base:bookworm"))
    sb.start()
    return sb, left


def test_healthcheck_retries_then_passes() -> None:
    sb, _ = _probe([1, 1])
    clock = _Clock()
    check = HealthcheckConfig(command="ready?", retries=3, interval_sec=2)
    assert run_healthcheck(sb, check, sleep=clock.sleep, clock=clock) == 3
    assert clock.now == 4.0


def test_healthcheck_fails_after_consecutive_retries() -> None:
    sb, left = _probe([1, 1, 1, 1, 1])
    check = HealthcheckConfig(command="ready?", retries=3, interval_sec=1)
    clock = _Clock()
    with pytest.raises(HealthcheckError, match=r"failed 3 time\(s\) in a row \(exit 1"):
        run_healthcheck(sb, check, sleep=clock.sleep, clock=clock)
    assert len(left) == 2


def test_failures_in_the_start_period_do_not_count() -> None:
    sb, _ = _probe([1, 1, 1, 1, 1, 1])
    check = HealthcheckConfig(command="ready?", retries=2, start_period_sec=10, start_interval_sec=2, interval_sec=1)
    clock = _Clock()
    assert run_healthcheck(sb, check, sleep=clock.sleep, clock=clock) == 7  # 5 in the start period, then 1 + pass


TOML = """\
schema_version = "1.4"
artifacts = ["/logs/artifacts/state.txt"]
[verifier]
timeout_sec = 30
environment_mode = "{mode}"
[agent]
timeout_sec = 30
[environment]
workdir = "/app"
{extra}
"""


def _task(root: Path, extra: str = "", mode: str = "separate") -> Path:
    files = {
        "task.toml": TOML.format(extra=extra, mode=mode),
        "instruction.md": "Do it.\n",
        "environment/Dockerfile": "FROM autoenv/base:bookworm\nWORKDIR /app\n",
        "solution/solve.sh": "#!/bin/bash\n",
        "tests/test.sh": "#!/bin/bash\n# writes /logs/verifier/reward.txt\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _backend(ready_after: int = 0) -> FakeBackend:
    """solve.sh writes /app/state; the hook snapshots it to /logs/artifacts; the tests score the snapshot."""
    backend = FakeBackend()
    tries = {"n": 0}

    def ready(sb: FakeSandbox, call: FakeCall) -> ExecResult:
        tries["n"] += 1
        return ExecResult(exit_code=0 if tries["n"] > ready_after else 1)

    def snapshot(sb: FakeSandbox, call: FakeCall) -> None:
        if sb.is_file("/app/state"):
            sb.write_file("/logs/artifacts/state.txt", sb.read_file("/app/state"))

    def test(sb: FakeSandbox, call: FakeCall) -> None:
        ok = sb.is_file("/logs/artifacts/state.txt") and not sb.is_file("/app/state")  # the artifact, not the app
        sb.write_file("/logs/verifier/reward.txt", "1" if ok else "0")

    backend.register(r"^ready\?", ready)
    backend.register(r"^snapshot", snapshot)
    backend.register(r"^broken-hook", lambda sb, call: ExecResult(exit_code=2, stderr="no such table"))
    backend.register(r"/solution/solve\.sh", lambda sb, call: sb.write_file("/app/state", "done"))
    backend.register(r"/tests/test\.sh", test)
    return backend


def _agent_sandbox(backend: FakeBackend) -> FakeSandbox:
    """The agent's (a separate verifier's may start first, while the agent's does)."""
    (agent,) = [sb for sb in backend.sandboxes if not sb.spec.name_hint.endswith("__verifier")]
    return agent


def _run(root: Path, backend: FakeBackend) -> TrialResult:
    runner = TrialRunner(backend, EnvironmentBuilder(backend), prewarm=False)
    return runner.run(load_task(root), OracleAgent(), root.parent / "trial")


def test_collect_hook_snapshots_state_for_a_separate_verifier(tmp_path: Path) -> None:
    extra = '[[verifier.collect]]\ncommand = "snapshot /app/state"\n'
    backend = _backend()
    res = _run(_task(tmp_path / "t", extra=extra.replace("[[", "\n[[")), backend)
    assert res.exception_info is None and res.reward == 1.0
    calls = _agent_sandbox(backend).calls
    assert calls.index("snapshot /app/state") < len(calls)  # ran in the agent's container
    assert (tmp_path / "trial" / "artifacts" / "logs" / "artifacts" / "state.txt").read_text() == "done"


def test_failing_collect_hook_is_noted_not_fatal(tmp_path: Path) -> None:
    extra = '\n[[verifier.collect]]\ncommand = "broken-hook"\n[[verifier.collect]]\ncommand = "snapshot"\n'
    res = _run(_task(tmp_path / "t", extra=extra), _backend())
    assert res.reward == 1.0  # the second hook still ran
    assert res.agent_result is not None
    assert res.agent_result.metadata["collect_hook_failures"] == ["collect hook 'broken-hook' exited 2: no such table"]


def test_healthcheck_runs_before_the_agent(tmp_path: Path) -> None:
    extra = '\n[environment.healthcheck]\ncommand = "ready?"\ninterval_sec = 0\nretries = 3\n'
    extra += '[[verifier.collect]]\ncommand = "snapshot"\n'
    backend = _backend(ready_after=2)
    res = _run(_task(tmp_path / "t", extra=extra), backend)
    assert res.reward == 1.0
    calls = _agent_sandbox(backend).calls
    first_solve = next(i for i, c in enumerate(calls) if "solve.sh" in c)
    assert [c for c in calls[:first_solve] if c == "ready?"] == ["ready?"] * 3


def test_healthcheck_that_never_passes_is_the_tasks_fault(tmp_path: Path) -> None:
    extra = '\n[environment.healthcheck]\ncommand = "ready?"\ninterval_sec = 0\nretries = 2\n'
    task = _task(tmp_path / "t", extra=extra)
    run = ValidationRun(tmp_path / "run", _backend(ready_after=99), ValidationConfig(repeats=1, check_leakage=False))
    (rep,), _ = run.run([task])
    assert rep.verdict.value == "invalid" and rep.failed_checks == ["healthcheck"], (rep.error, rep.checks)


def test_step_healthcheck_and_hooks(tmp_path: Path) -> None:
    extra = (
        '\n[[steps]]\nname = "one"\n[steps.agent]\nuser = "agent"\n'
        '[steps.healthcheck]\ncommand = "ready?"\ninterval_sec = 0\n'
        '[[steps.verifier.collect]]\ncommand = "snapshot"\n'
    )
    root = _task(tmp_path / "t", extra=extra)
    (root / "steps" / "one" / "solution").mkdir(parents=True)
    (root / "steps" / "one" / "instruction.md").write_text("Do one.\n")
    (root / "steps" / "one" / "solution" / "solve.sh").write_text("#!/bin/bash\n")
    users: list[str | None] = []
    backend = _backend()
    backend.handlers.insert(0, (re.compile(r"^ready\?"), lambda sb, call: users.append(call.user)))
    res = _run(root, backend)
    assert res.reward == 1.0 and res.step_results is not None
    assert users == ["agent"]  # a step's check runs as the step's agent user
