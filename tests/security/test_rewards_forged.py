"""Findings 6, 7 and 10: the agent phase cannot forge the reward or the trajectory, and a reward baked into the
image is found even where the image's user cannot read it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile import MakeTask

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.tasks import Task, load_task
from autoenvscaling.validate.leakage import check_leakage
from autoenvscaling.validate.report import LEAK_REWARD
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.results import AgentContext, AgentInfo
from autoenvscaling.verify.trial import TrialRunner
from autoenvscaling.verify.trial_agents import OracleAgent

# Left running by the "solution": rewrites the reward every 20 ms, as long as it lives.
FORGER = (
    "nohup bash -c 'while true; do echo 1 > /logs/verifier/reward.txt 2>/dev/null; sleep 0.02; done' >/dev/null 2>&1 &"
)
HONEST_TEST = "echo 0 > /logs/verifier/reward.txt; sleep 0.5"


@pytest.mark.docker
@pytest.mark.parametrize("mode", ["shared", "separate"])
def test_leftover_process_cannot_rewrite_the_reward(
    make_task: MakeTask, docker_backend: DockerBackend, tmp_path: Path, mode: str
) -> None:
    root = make_task(solve=FORGER, test=HONEST_TEST, verifier=f'environment_mode = "{mode}"')
    runner = TrialRunner(docker_backend, EnvironmentBuilder(docker_backend), prewarm=False)
    res = runner.run(load_task(root), OracleAgent(), tmp_path / "trial")
    assert res.exception_info is None, res.exception_info
    assert res.reward == 0.0


@pytest.mark.docker
def test_separate_mode_carries_only_the_artifacts_and_honours_users(
    make_task: MakeTask, docker_backend: DockerBackend, tmp_path: Path
) -> None:
    root = make_task(
        top='artifacts = ["/tmp/out"]',
        agent='user = "nobody"',
        solve="id -un > /tmp/out; echo junk > /tmp/other",
        test='[ "$(cat /tmp/out)" = nobody ] && [ ! -e /tmp/other ] && [ "$(id -u)" = 0 ] '
        '&& [ "$(stat -c %U:%a /logs/verifier)" = root:755 ] && echo 1 > /logs/verifier/reward.txt '
        "|| echo 0 > /logs/verifier/reward.txt",
        verifier='environment_mode = "separate"\nuser = "root"',
    )
    runner = TrialRunner(docker_backend, EnvironmentBuilder(docker_backend), prewarm=False)
    res = runner.run(load_task(root), OracleAgent(), tmp_path / "trial")
    assert res.exception_info is None, res.exception_info
    assert res.reward == 1.0


class _Poisoner:
    """The harness writes the trajectory; the image also puts one in /logs/agent."""

    info = AgentInfo(name="poisoner")

    def setup(self, sandbox: object, task: Task) -> None:
        return None

    def run(self, sandbox: object, task: Task, agent_dir: Path, timeout_sec: float | None) -> AgentContext:
        (agent_dir / "trajectory.json").write_text('{"harness": true}')
        assert hasattr(sandbox, "upload_text")
        sandbox.upload_text('{"poisoned": true}', "/logs/agent/trajectory.json")
        sandbox.upload_text("extra", "/logs/agent/notes.txt")
        return AgentContext()


def test_container_cannot_replace_the_trajectory(make_task: MakeTask, tmp_path: Path) -> None:
    backend = FakeBackend()
    backend.register(r"/tests/test\.sh", lambda sb, call: sb.write_file("/logs/verifier/reward.txt", "1"))
    runner = TrialRunner(backend, EnvironmentBuilder(backend), prewarm=False)
    runner.run(load_task(make_task()), _Poisoner(), tmp_path / "trial")  # type: ignore[arg-type]
    assert (tmp_path / "trial" / "agent" / "trajectory.json").read_text() == '{"harness": true}'
    assert (tmp_path / "trial" / "agent" / "notes.txt").read_text() == "extra"  # the rest is still kept


@pytest.mark.docker
def test_prewritten_reward_hidden_from_the_image_user_is_found(
    make_task: MakeTask, docker_backend: DockerBackend
) -> None:
    dockerfile = (
        f"FROM {BASE_IMAGE}\nWORKDIR /app\nRUN mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt"
        " && chmod 700 /logs/verifier\nUSER 1000:1000\n"
    )
    task = load_task(make_task(dockerfile=dockerfile))
    builder = EnvironmentBuilder(docker_backend)
    spec = builder.spec_for(task, builder.image_for(task), name_hint="leak", network=False)
    with docker_backend.create(spec) as sandbox:
        checks = {c.id: c for c in check_leakage(task, sandbox)}
    assert not checks[LEAK_REWARD].passed
