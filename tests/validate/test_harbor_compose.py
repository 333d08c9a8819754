"""The multi-container examples (examples/harbor-kinds/compose-service, compose-volumes) through validate, solve and
a trial that outlives its limit, on Docker: the verdicts Harbor would give, and no container, network or volume left
behind."""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path

import docker
import pytest

from autoenvscaling.roles.solve_run import SolveRun
from autoenvscaling.sandbox.base import LABEL_RUN, Sandbox
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.tasks import Task, load_task
from autoenvscaling.validate.report import Verdict
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.results import AgentContext, AgentInfo
from autoenvscaling.verify.trial import TrialOptions, TrialRunner
from autoenvscaling.verify.trial_agents import NopAgent, OracleAgent
from docker_helpers import containers_of

pytestmark = pytest.mark.docker

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "harbor-kinds" / "compose-service"
VOLUMES = EXAMPLE.parent / "compose-volumes"
IMAGE = "autoenv/terminal:latest"


def _unique(tmp_path: Path, name: str) -> Path:
    """A run dir whose name (the run id, in every label) no concurrent run of the same tests shares."""
    return tmp_path / f"{name}-{uuid.uuid4().hex[:8]}"


def _left(run_id: str) -> tuple[list[str], list[str], list[str]]:
    client = docker.from_env()
    label = {"label": f"{LABEL_RUN}={run_id}"}
    containers = containers_of(run_id)
    volumes = [v.name or "" for v in client.volumes.list(filters=label)]
    return containers, [n.name or "" for n in client.networks.list(filters=label)], volumes


def test_validate_oracle_passes_nop_fails_and_nothing_stays(backend: DockerBackend, tmp_path: Path) -> None:
    run = ValidationRun(_unique(tmp_path, "service"), backend, ValidationConfig(repeats=2))
    (rep,), _ = run.run([EXAMPLE])
    assert rep.verdict == Verdict.VALID, (rep.failed_checks, rep.error, rep.checks)
    rewards = {t.trial_name: t.reward for t in rep.trials}
    assert rewards == {"compose-service__oracle-1": 1.0, "compose-service__oracle-2": 1.0, "compose-service__nop": 0.0}
    assert _left(run.run_id) == ([], [], [])


def test_a_shared_volume_tmpfs_env_file_and_build_args_validate(backend: DockerBackend, tmp_path: Path) -> None:
    """The writer's build arg, env_file and environment reach the manifest it leaves in the trial's volume; main
    reads it (and its tmpfs) in the agent's environment and again in the separate verifier's fresh one."""
    run = ValidationRun(_unique(tmp_path, "volumes"), backend, ValidationConfig(repeats=2))
    (rep,), _ = run.run([VOLUMES])
    assert rep.verdict == Verdict.VALID, (rep.failed_checks, rep.error, rep.checks)
    rewards = {t.trial_name: t.reward for t in rep.trials}
    assert rewards == {"compose-volumes__oracle-1": 1.0, "compose-volumes__oracle-2": 1.0, "compose-volumes__nop": 0.0}
    assert _left(run.run_id) == ([], [], [])


def test_solve_runs_it(backend: DockerBackend, tmp_path: Path) -> None:
    for agent, reward in ((OracleAgent, 1.0), (NopAgent, 0.0)):
        run_dir = tmp_path / agent.info.name
        records, _ = SolveRun(run_dir, backend, agent, attempts=1).run([EXAMPLE])
        assert [r.reward for r in records] == [reward], [r.error for r in records]
        assert _left(run_dir.name) == ([], [], [])


class _Hangs:
    """An agent that never returns on its own: only the watchdog ends its trial."""

    info = AgentInfo(name="hangs", version="1")

    def setup(self, sandbox: Sandbox, task: Task) -> None:
        return None

    def run(self, sandbox: Sandbox, task: Task, agent_dir: Path, timeout_sec: float | None) -> AgentContext:
        sandbox.exec("sleep 120")
        return AgentContext()


def test_a_trial_past_its_limit_removes_every_container_and_the_network(backend: DockerBackend, tmp_path: Path) -> None:
    root = tmp_path / "compose-service"
    shutil.copytree(EXAMPLE, root)
    toml = root / "task.toml"
    toml.write_text(toml.read_text().replace("[agent]\ntimeout_sec = 300", "[agent]\ntimeout_sec = 1"))
    run_id = f"compose-watchdog-{int(time.time())}"
    options = TrialOptions(watchdog_grace_sec=1)
    runner = TrialRunner(backend, EnvironmentBuilder(backend), run_id=run_id, prewarm=False, options=options)
    result = runner.run(load_task(root), _Hangs(), tmp_path / "trial")
    assert result.exception_info is not None and result.exception_info.exception_type == "TrialWatchdogError"
    assert result.reward is None
    assert _left(run_id) == ([], [], [])
