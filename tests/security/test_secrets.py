"""Finding 2: ``${VAR}`` never reads the host's environment unless the user passes the variable, and known
secret values are scrubbed from everything a trial writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile import MakeTask

from autoenvscaling.sandbox.fake import FakeBackend, FakeCall, FakeSandbox
from autoenvscaling.tasks import load_task
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.trial import TrialOptions, TrialRunner
from autoenvscaling.verify.trial_agents import OracleAgent

SECRET = "sk-live-0123456789abcdef"


def _echo_env(sb: FakeSandbox, call: FakeCall) -> None:
    # The hostile scripts print what they were given, as a real one would leak it into its output.
    sb.mkdir("/logs/verifier", parents=True)
    sb.write_file("/logs/verifier/test-stdout.txt", f"K={call.env.get('K', '')}\n")
    sb.write_file("/logs/verifier/reward.txt", "1\n")


def _run(make_task: MakeTask, tmp_path: Path, options: TrialOptions) -> tuple[Path, FakeBackend]:
    root = make_task(verifier='[verifier.env]\nK = "${AUTOENV_TEST_API_KEY}"', solve="echo $K")
    backend = FakeBackend()
    backend.register(r"/tests/test\.sh", _echo_env)
    seen: list[str] = []
    backend.register(r"bash /solution/solve\.sh", lambda sb, call: seen.append(call.env.get("K", "")) or None)
    runner = TrialRunner(backend, EnvironmentBuilder(backend), prewarm=False, options=options)
    res = runner.run(load_task(root), OracleAgent(options.passed_env), tmp_path / "trial")
    assert res.reward == 1.0, res.exception_info
    return tmp_path / "trial", backend


def _all_text(trial: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in trial.rglob("*") if p.is_file())


def test_host_variables_are_not_expanded_by_default(
    make_task: MakeTask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOENV_TEST_API_KEY", SECRET)
    trial, _ = _run(make_task, tmp_path, TrialOptions())
    assert "K=\n" in (trial / "verifier" / "test-stdout.txt").read_text()
    assert SECRET not in _all_text(trial)


def test_passed_variables_reach_the_task_but_not_the_files(
    make_task: MakeTask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOENV_TEST_API_KEY", SECRET)
    trial, _ = _run(make_task, tmp_path, TrialOptions(passed_env={"AUTOENV_TEST_API_KEY": SECRET}))
    assert "K=[redacted]" in (trial / "verifier" / "test-stdout.txt").read_text()
    assert SECRET not in _all_text(trial)
