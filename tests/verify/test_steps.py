"""Multi-step trials with Harbor 0.26's semantics, on the fake sandbox (the Docker run is the harbor-kinds example).

The fake's "solve.sh" marks its step done (``/app/<step>.done``); its "test.sh" scores 1 when the step named in
``/tests/step`` is done, or replays a fixed ``/tests/reward.json``. So each test controls every step's reward."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoenvscaling.sandbox.base import ExecResult
from autoenvscaling.sandbox.fake import FakeBackend, FakeCall, FakeSandbox
from autoenvscaling.tasks import load_task
from autoenvscaling.tasks.steps import StepPaths, combine_step_rewards, min_reward_failure, step_config
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.results import TrialResult
from autoenvscaling.verify.trial import TrialRunner
from autoenvscaling.verify.trial_agents import NopAgent, OracleAgent

TOML = """\
schema_version = "1.4"
{top}
[verifier]
timeout_sec = 30
env = {{ A = "task", B = "task" }}
[agent]
timeout_sec = 40
user = "agent"
[environment]
workdir = "/app"
{steps}
"""


def _solve(sb: FakeSandbox, call: FakeCall) -> None:
    sb.write_file(f"/app/{sb.read_file('/solution/step').decode().strip()}.done", "")


def _test(sb: FakeSandbox, call: FakeCall) -> ExecResult | None:
    if sb.is_file("/tests/reward.json"):
        sb.write_file("/logs/verifier/reward.json", sb.read_file("/tests/reward.json"))
    elif sb.is_file("/tests/no-reward"):
        return None
    else:
        step = sb.read_file("/tests/step").decode().strip()
        sb.write_file("/logs/verifier/reward.txt", "1" if sb.is_file(f"/app/{step}.done") else "0")
    sb.write_file("/logs/verifier/env.txt", f"{call.env.get('A')} {call.env.get('B')} {call.user}")
    return None


def _backend(setup_exit: int = 0) -> FakeBackend:
    backend = FakeBackend()
    backend.register(r"/solution/solve\.sh", _solve)
    backend.register(r"/tests/test\.sh", _test)
    backend.register(r"^bash /app/setup\.sh", lambda sb, call: ExecResult(exit_code=setup_exit, stderr="no disk"))
    return backend


def _task(root: Path, steps: list[str], *, top: str = "", extra: str = "") -> Path:
    blocks = "".join(f'[[steps]]\nname = "{s}"\n{extra if i == 0 else ""}' for i, s in enumerate(steps))
    files = {
        "task.toml": TOML.format(top=top, steps=blocks),
        "environment/Dockerfile": "FROM autoenv/base:bookworm\nWORKDIR /app\n",
        "tests/test.sh": "#!/bin/bash\n",
        "tests/step": "task-level\n",
    }
    for s in steps:
        files |= {
            f"steps/{s}/instruction.md": f"Do {s}.\n",
            f"steps/{s}/solution/solve.sh": "#!/bin/bash\n",
            f"steps/{s}/solution/step": s,
            f"steps/{s}/tests/step": s,
            f"steps/{s}/workdir/input-{s}.txt": s,
        }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _run(root: Path, agent: OracleAgent | NopAgent | None = None, backend: FakeBackend | None = None) -> TrialResult:
    backend = backend or _backend()
    runner = TrialRunner(backend, EnvironmentBuilder(backend), prewarm=False)
    return runner.run(load_task(root), agent or OracleAgent(), root.parent / f"{root.name}-trial")


def test_oracle_runs_every_step_in_one_container(tmp_path: Path) -> None:
    backend = _backend()
    res = _run(_task(tmp_path / "t", ["one", "two", "three"]), backend=backend)
    assert res.exception_info is None and res.reward == 1.0
    assert [s.step_name for s in res.step_results or []] == ["one", "two", "three"]
    (sb,) = backend.sandboxes
    assert all(sb.is_file(f"/app/input-{s}.txt") for s in ("one", "two", "three"))  # workdir files, in /app
    trial = tmp_path / "t-trial"
    assert (trial / "steps" / "two" / "verifier" / "reward.txt").read_text() == "1"
    assert json.loads((trial / "result.json").read_text())["step_results"][2]["step_name"] == "three"
    # Between steps the harness clears /tests and the logs: the agent of a step never sees the last step's tests.
    resets = [c for c in sb.calls if c.startswith("rm -rf /tests /logs/agent /logs/verifier")]
    assert len(resets) == 2


def test_separate_verifier_gets_a_fresh_container_per_step(tmp_path: Path) -> None:
    top = 'artifacts = ["/app/one.done", "/app/two.done"]'
    root = _task(tmp_path / "t", ["one", "two"], top=top)
    toml = (root / "task.toml").read_text().replace("[verifier]\n", '[verifier]\nenvironment_mode = "separate"\n')
    (root / "task.toml").write_text(toml)
    backend = _backend()
    res = _run(root, backend=backend)
    assert res.exception_info is None and res.reward == 1.0  # each verifier saw its step's artifact
    agent, first, second = backend.sandboxes
    assert agent.is_file("/app/input-two.txt")  # the agent's container lived on into step two
    assert first.stopped and second.stopped and agent.stopped
    assert first.is_file("/app/one.done") and not first.is_file("/app/input-one.txt")  # artifacts only
    assert (tmp_path / "t-trial" / "steps" / "two" / "artifacts" / "app" / "two.done").is_file()


def test_min_reward_stops_and_mean_counts_only_steps_that_ran(tmp_path: Path) -> None:
    root = _task(tmp_path / "t", ["one", "two", "three"], extra="min_reward = 1.0\n")
    nop = _run(root, NopAgent())
    assert [s.step_name for s in nop.step_results or []] == ["one"]  # step one scored 0 < 1: the rest never run
    assert nop.reward == 0.0 and nop.exception_info is None
    # Step two fails without a gate, step three passes: mean over three steps.
    (root / "steps" / "two" / "solution" / "step").write_text("nothing")
    assert _run(root).reward == pytest.approx(2 / 3)


def test_final_strategy_takes_the_last_step(tmp_path: Path) -> None:
    root = _task(tmp_path / "t", ["one", "two"], top='multi_step_reward_strategy = "final"')
    (root / "steps" / "one" / "solution" / "step").write_text("nothing")
    res = _run(root)
    assert [s.verifier_result.rewards for s in res.step_results or [] if s.verifier_result] == [
        {"reward": 0.0},
        {"reward": 1.0},
    ]
    assert res.reward == 1.0


def test_multi_dimension_rewards_are_averaged_per_key(tmp_path: Path) -> None:
    root = _task(tmp_path / "t", ["one", "two"])
    (root / "steps" / "one" / "tests" / "reward.json").write_text('{"reward": 1, "style": 0.5}')
    (root / "steps" / "two" / "tests" / "reward.json").write_text('{"reward": 0}')
    res = _run(root)
    assert res.verifier_result is not None
    assert res.verifier_result.rewards == {"reward": 0.5, "style": 0.25}  # a key a step lacks counts 0 there


def test_dict_min_reward_gates_each_key(tmp_path: Path) -> None:
    root = _task(tmp_path / "t", ["one", "two"], extra="min_reward = { style = 0.6 }\n")
    (root / "steps" / "one" / "tests" / "reward.json").write_text('{"reward": 1, "style": 0.5}')
    res = _run(root)
    assert [s.step_name for s in res.step_results or []] == ["one"]


def test_a_step_without_reward_makes_the_trial_an_error(tmp_path: Path) -> None:
    root = _task(tmp_path / "t", ["one", "two", "three"])
    (root / "steps" / "two" / "tests" / "no-reward").write_text("")
    res = _run(root)
    assert res.is_error and res.reward is None
    assert res.exception_info is not None and res.exception_info.exception_type == "RewardMissingError"
    assert [s.step_name for s in res.step_results or []] == ["one", "two"]


def test_failing_setup_is_the_tasks_fault(tmp_path: Path) -> None:
    root = _task(tmp_path / "t", ["one", "two"])
    (root / "steps" / "two" / "workdir" / "setup.sh").write_text("exit 1\n")
    res = _run(root, backend=_backend(setup_exit=3))
    assert res.is_error
    assert res.exception_info is not None and res.exception_info.exception_type == "StepSetupError"
    assert "step 'two': workdir/setup.sh exited 3: no disk" in res.exception_info.exception_message


def test_step_settings_fall_back_to_the_tasks_as_in_harbor(tmp_path: Path) -> None:
    extra = '[steps.agent]\nuser = "root"\n[steps.verifier]\nenv = { B = "step" }\nuser = "tester"\n'
    root = _task(tmp_path / "t", ["one", "two"], extra=extra)
    task = load_task(root)
    one, two = (step_config(task.config, s) for s in task.config.steps)
    assert (one.agent.user, one.agent.timeout_sec, two.agent.user, two.agent.timeout_sec) == ("root", 40, "agent", 40)
    # The verifier timeout is the step's own or Harbor's 600 s default, never the task's 30 s.
    assert (one.verifier.timeout_sec, two.verifier.timeout_sec) == (600.0, 600.0)
    _run(root)
    trial = tmp_path / "t-trial" / "steps"
    assert (trial / "one" / "verifier" / "env.txt").read_text() == "task step tester"
    assert (trial / "two" / "verifier" / "env.txt").read_text() == "task task None"


def test_step_paths_fall_back_to_the_tasks_files(tmp_path: Path) -> None:
    root = _task(tmp_path / "t", ["one"])
    paths = StepPaths(root, step="one")
    assert paths.solution_dir == root / "steps" / "one" / "solution"
    assert paths.test_dirs == [root / "tests", root / "steps" / "one" / "tests"]  # the step's go over the task's
    (root / "steps" / "one" / "solution" / "solve.sh").unlink()
    (root / "steps" / "one" / "solution" / "step").unlink()
    (root / "steps" / "one" / "solution").rmdir()
    assert paths.solution_dir == root / "solution"


def test_reward_rules() -> None:
    assert min_reward_failure({"reward": 1.0}, 1.0) is None
    assert min_reward_failure({"reward": 0.5}, 1) == "reward = 0.5 is below min_reward 1"
    assert min_reward_failure({"reward": 1.0}, {"style": 0.1}) == "style = -inf is below min_reward 0.1"
    assert min_reward_failure(None, 0.0) is not None
    assert combine_step_rewards("mean", []) is None
    assert combine_step_rewards(None, [{"reward": 1.0}, {"reward": 0.0, "x": 1.0}]) == {"reward": 0.5, "x": 0.5}
    assert combine_step_rewards("final", [{"reward": 1.0}, {"x": 0.0}]) == {"x": 0.0}


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", " ", "con:"])
def test_step_names_are_one_directory(tmp_path: Path, name: str) -> None:
    from autoenvscaling.tasks import TaskFormatError

    root = _task(tmp_path / "t", ["one"])
    (root / "task.toml").write_text((root / "task.toml").read_text().replace('"one"', json.dumps(name)))
    with pytest.raises(TaskFormatError, match=r"steps\.0\.name"):
        load_task(root)


def test_leakage_scan_knows_the_steps_solutions_and_tests(tmp_path: Path) -> None:
    import hashlib

    from autoenvscaling.sandbox.base import SandboxSpec
    from autoenvscaling.validate.leakage import check_leakage

    root = _task(tmp_path / "t", ["one", "two"])
    (root / "steps" / "two" / "solution" / "solve.sh").write_text("#!/bin/bash\necho the answer is 42 > /app/out\n")
    digest = hashlib.sha256((root / "steps" / "two" / "solution" / "solve.sh").read_bytes()).hexdigest()
    backend = FakeBackend()
    backend.register(r"^find / ", lambda sb, call: ExecResult(stdout=f"{digest}  /opt/s.sh\naes-scan-status:0,0\n"))
    with backend.create(SandboxSpec(image="autoenv/base:bookworm")) as sb:
        checks = {c.id: c for c in check_leakage(load_task(root), sb)}
    assert not checks["leak-solution"].passed and "/opt/s.sh" in checks["leak-solution"].detail
