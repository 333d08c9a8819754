"""One trial: fresh sandbox -> agent phase -> verifier -> teardown, timed per phase, written as result.json.

Failures are recorded, not raised: an infrastructure failure lands in ``exception_info`` with no reward
(an error), a verifier that yields no reward likewise; a task the agent failed is a reward of 0.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from autoenvscaling.sandbox.base import Sandbox, SandboxBackend
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.paths import CONTAINER_LOGS_AGENT, CONTAINER_LOGS_ARTIFACTS, CONTAINER_LOGS_VERIFIER
from autoenvscaling.verify.agents import TrialAgent
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.errors import AgentTimeoutError
from autoenvscaling.verify.paths import TrialPaths
from autoenvscaling.verify.prewarm import Prewarmer
from autoenvscaling.verify.results import ExceptionInfo, TaskId, TimingInfo, TrialResult, utcnow
from autoenvscaling.verify.verifier import Verifier


@contextlib.contextmanager
def _timed(info: TimingInfo) -> Iterator[TimingInfo]:
    info.started_at = utcnow()
    try:
        yield info
    finally:
        info.finished_at = utcnow()


def write_json_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class TrialRunner:
    """Runs trials of tasks on one backend. Thread-safe: call ``run`` from several threads."""

    def __init__(
        self,
        backend: SandboxBackend,
        builder: EnvironmentBuilder,
        run_id: str | None = None,
        *,
        prewarm: bool = True,
    ) -> None:
        self.backend = backend
        self.builder = builder
        self.run_id = run_id
        self.prewarmer = Prewarmer(backend) if prewarm else None

    def close(self) -> None:
        """Stop spare sandboxes nobody took. Call once no more trials will run."""
        if self.prewarmer is not None:
            self.prewarmer.close()

    def prewarm(self, task: Task) -> None:
        """Start a sandbox for this task's next trial in the background."""
        if self.prewarmer is not None:
            image = self.builder.image_for(task)
            spare = self.builder.spec_for(task, image, name_hint=f"{task.name}__next", run_id=self.run_id)
            self.prewarmer.prepare(f"{task.paths.root}|{image}", spare)

    def _sandbox(self, task: Task, trial_dir: Path, prewarm_next: bool) -> Sandbox:
        image = self.builder.image_for(task)
        key = f"{task.paths.root}|{image}"
        sandbox = self.prewarmer.take(key) if self.prewarmer else None
        if sandbox is None:
            spec = self.builder.spec_for(task, image, name_hint=trial_dir.name, run_id=self.run_id)
            sandbox = self.backend.create(spec)
            try:
                sandbox.start()
            except BaseException:
                sandbox.stop()
                raise
        if prewarm_next:
            self.prewarm(task)
        return sandbox

    def run(
        self,
        task: Task,
        agent: TrialAgent,
        trial_dir: Path,
        *,
        agent_timeout_sec: float | None = None,
        prewarm_next: bool = False,
    ) -> TrialResult:
        """Run one trial. ``prewarm_next``: another trial of this task follows, so start its sandbox now."""
        paths = TrialPaths(trial_dir).make()
        result = TrialResult(
            task_name=task.name,
            trial_name=trial_dir.name,
            trial_uri=trial_dir.resolve().as_uri(),
            task_id=TaskId(path=str(task.paths.root)),
            task_checksum=task.content_hash(),
            agent_info=agent.info,
            started_at=utcnow(),
        )
        sandbox: Sandbox | None = None
        try:
            result.environment_setup = TimingInfo()
            with _timed(result.environment_setup):
                sandbox = self._sandbox(task, trial_dir, prewarm_next)
                sandbox.exec(
                    f"mkdir -p {CONTAINER_LOGS_AGENT} {CONTAINER_LOGS_VERIFIER} {CONTAINER_LOGS_ARTIFACTS}",
                    timeout=30,
                )
            self._agent_phases(task, agent, sandbox, paths, result, agent_timeout_sec)
            if result.exception_info is None or result.exception_info.exception_type == "AgentTimeoutError":
                result.verifier = TimingInfo()
                verifier = Verifier(task, sandbox, paths.verifier_dir)
                try:
                    with _timed(result.verifier):
                        result.verifier_result = verifier.verify()
                finally:
                    if verifier.tests_seconds is not None:
                        result.command_seconds["tests"] = verifier.tests_seconds
        except Exception as e:  # recorded: the caller decides what an error means for its verdict
            result.exception_info = ExceptionInfo.from_exception(e)
        finally:
            if sandbox is not None:
                result.teardown = TimingInfo()
                with _timed(result.teardown):
                    try:
                        sandbox.stop()
                    except Exception as e:
                        if result.exception_info is None:
                            result.exception_info = ExceptionInfo.from_exception(e)
            result.finished_at = utcnow()
            write_json_atomic(paths.result, result.model_dump_json(indent=2))
        return result

    def _agent_phases(
        self,
        task: Task,
        agent: TrialAgent,
        sandbox: Sandbox,
        paths: TrialPaths,
        result: TrialResult,
        agent_timeout_sec: float | None,
    ) -> None:
        result.agent_setup = TimingInfo()
        with _timed(result.agent_setup):
            agent.setup(sandbox, task)
        timeout = agent_timeout_sec if agent_timeout_sec is not None else task.config.agent.timeout_sec
        result.agent_execution = TimingInfo()
        try:
            with _timed(result.agent_execution):
                result.agent_result = agent.run(sandbox, task, paths.agent_dir, timeout)
            command_sec = result.agent_result.metadata.get("command_sec")
            if isinstance(command_sec, int | float):
                result.command_seconds["agent"] = float(command_sec)
        except AgentTimeoutError as e:
            # Harbor semantics: an agent that runs out of time is still graded.
            result.exception_info = ExceptionInfo.from_exception(e)
        finally:
            self._collect_agent_outputs(task, sandbox, paths)

    @staticmethod
    def _collect_agent_outputs(task: Task, sandbox: Sandbox, paths: TrialPaths) -> None:
        with contextlib.suppress(Exception):
            sandbox.download(CONTAINER_LOGS_AGENT, paths.agent_dir)
        for artifact in task.config.artifacts:
            dest = paths.artifacts_dir / artifact.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(Exception):
                sandbox.download(artifact, dest)
