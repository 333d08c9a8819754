"""One trial: fresh sandbox -> agent phase -> verifier -> teardown, timed per phase, written as result.json.

Failures are recorded, not raised: an infrastructure failure lands in ``exception_info`` with no reward
(an error), a verifier that yields no reward likewise; a task the agent failed is a reward of 0.

Untrusted-task controls live here: every phase runs under a watchdog (its declared limit plus a grace period),
artifacts are confined to the trial dir, files from the container never replace the harness's own, the verifier
runs in a fresh container (``environment_mode = "separate"``) or, in shared mode, only after every agent-phase
process is gone, and known secret values are scrubbed from the trial dir before anyone reads it.

Off the critical path: the next trial's sandbox starts early (verify/prewarm.py), and so does a separate
verifier's fresh container, where the agent's container cannot reach it (verify/separate.py); with
``remove_in_background`` (the validator's default) a finished trial's containers are removed while the next runs.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Self

from pydantic import BaseModel, Field

from autoenvscaling.execution.rundir import write_atomic
from autoenvscaling.sandbox.base import (
    CopyOutLimitError,
    NetworkControl,
    Sandbox,
    SandboxBackend,
    SandboxError,
)
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.config import NetworkMode
from autoenvscaling.tasks.paths import CONTAINER_LOGS_AGENT
from autoenvscaling.verify.as_user import AsUser
from autoenvscaling.verify.confine import artifact_dest, merge_untrusted
from autoenvscaling.verify.environment import EnvironmentBuilder, UnsupportedTaskError, check_supported
from autoenvscaling.verify.errors import AgentTimeoutError, TrialWatchdogError
from autoenvscaling.verify.hooks import collect_limit, run_collect_hooks, run_healthcheck
from autoenvscaling.verify.paths import TrialPaths
from autoenvscaling.verify.prewarm import PendingSandbox, Prewarmer, Reaper
from autoenvscaling.verify.processes import agent_phase_mark, end_agent_processes
from autoenvscaling.verify.results import ExceptionInfo, StepResult, TaskId, TimingInfo, TrialResult, utcnow
from autoenvscaling.verify.secrets import scrub_text, scrub_tree, secret_values
from autoenvscaling.verify.separate import MKDIR_LOGS, AgentRemoval, VerifierSandboxes, started
from autoenvscaling.verify.steps import run_steps
from autoenvscaling.verify.trial_agents import TrialAgent
from autoenvscaling.verify.verifier import Verifier

# Agents that never read agent-facing task features (MCP servers, skills), as in Harbor.
_HARNESS_AGENTS = frozenset({"oracle", "nop"})


class TrialOptions(BaseModel):
    """What the caller (not the task) decides about every trial."""

    passed_env: dict[str, str] = Field(
        default_factory=dict, description="host variables the user passed; the only ones ${VAR} may expand to"
    )
    network: bool | None = Field(
        default=None, description="None: the task's network policy; False: no network in any phase"
    )
    watchdog_grace_sec: float = Field(
        default=30.0, gt=0, description="how long a phase may outlive its declared limit before its sandbox goes"
    )
    prestart_verifier: bool = Field(
        default=True,
        description="start a separate verifier's container while the agent works, where the agent's container "
        "cannot reach it (the result is the same either way)",
    )
    remove_in_background: bool = Field(
        default=False,
        description="remove a trial's containers after its result is written, while the next trial runs; the "
        "runner's close() waits for them, and a removal that fails is logged instead of making the trial an error",
    )


@contextlib.contextmanager
def _timed(info: TimingInfo) -> Iterator[TimingInfo]:
    info.started_at = utcnow()
    try:
        yield info
    finally:
        info.finished_at = utcnow()


class _Watchdog:
    """Removes the phase's sandboxes once ``seconds`` pass; the phase then ends with ``TrialWatchdogError``."""

    def __init__(self, seconds: float, what: str, sandboxes: list[Sandbox]) -> None:
        self.seconds = seconds
        self.what = what
        self.sandboxes = sandboxes
        self.fired = threading.Event()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        self.fired.set()
        for sb in list(self.sandboxes):
            with contextlib.suppress(Exception):
                sb.stop()

    def __enter__(self) -> Self:
        self._timer.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._timer.cancel()
        if self.fired.is_set():
            raise TrialWatchdogError(
                f"the {self.what} outlived its limit by more than the grace period ({self.seconds:g} s in all); "
                "its sandbox was removed"
            ) from None


class TrialRunner:
    """Runs trials of tasks on one backend. Thread-safe: call ``run`` from several threads."""

    def __init__(
        self,
        backend: SandboxBackend,
        builder: EnvironmentBuilder,
        run_id: str | None = None,
        *,
        prewarm: bool = True,
        options: TrialOptions | None = None,
    ) -> None:
        self.backend = backend
        self.builder = builder
        self.run_id = run_id
        self.options = options or TrialOptions()
        self.prewarmer = Prewarmer(backend) if prewarm else None
        self.reaper = Reaper() if self.options.remove_in_background else None
        self._secrets = secret_values(self.options.passed_env)
        self.verifiers = VerifierSandboxes(
            backend, builder, run_id, self._network, prestart=self.options.prestart_verifier
        )

    def close(self) -> None:
        """Stop spare sandboxes nobody took, and wait for the removals in flight. Call once no more trials will run."""
        if self.prewarmer is not None:
            self.prewarmer.close()
        self.verifiers.close()
        if self.reaper is not None:
            self.reaper.close()

    def _network(self, mode: NetworkMode) -> bool:
        return mode != NetworkMode.NO_NETWORK and self.options.network is not False

    def prewarm(self, task: Task) -> None:
        """Start a sandbox for this task's next trial in the background."""
        if self.prewarmer is not None:
            image = self.builder.image_for(task)
            spare = self.builder.spec_for(
                task,
                image,
                name_hint=f"{task.name}__next",
                run_id=self.run_id,
                network=self._network(task.config.agent_network_mode),
            )
            self.prewarmer.prepare(f"{task.paths.root}|{image}", spare)

    def _sandbox(self, task: Task, trial_dir: Path, prewarm_next: bool) -> Sandbox:
        image = self.builder.image_for(task)
        key = f"{task.paths.root}|{image}"
        sandbox = self.prewarmer.take(key) if self.prewarmer else None
        if sandbox is None:
            network = self._network(task.config.agent_network_mode)
            spec = self.builder.spec_for(task, image, name_hint=trial_dir.name, run_id=self.run_id, network=network)
            sandbox = started(self.backend.create(spec))
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
        sandboxes: list[Sandbox] = []
        early: PendingSandbox | None = None
        try:
            result.environment_setup = TimingInfo()
            with _timed(result.environment_setup):
                check_supported(task, agent_facing=agent.info.name not in _HARNESS_AGENTS)
                sandbox = self._sandbox(task, trial_dir, prewarm_next)
                sandboxes.append(sandbox)
                early = self.verifiers.start_early(task, paths)  # after the agent's: that one is waited for first
                if task.config.environment.healthcheck is not None:  # ready before the agent (and the mark)
                    run_healthcheck(sandbox, task.config.environment.healthcheck)
                mark = agent_phase_mark(sandbox, before=MKDIR_LOGS)
            if task.config.is_multi_step:
                run_steps(self, task, agent, sandbox, paths, result, agent_timeout_sec, sandboxes)
            else:
                self._agent_phases(task, agent, sandbox, paths, result, agent_timeout_sec, sandboxes)
                if result.exception_info is None or result.exception_info.exception_type == "AgentTimeoutError":
                    self._verify(task, sandbox, mark, paths, result, sandboxes, early=early)
        except Exception as e:  # recorded: the caller decides what an error means for its verdict
            result.exception_info = ExceptionInfo.from_exception(e)
        finally:
            self._teardown(result, sandboxes, early)
            result.finished_at = utcnow()
            scrub_tree(paths.root, self._secrets)
            text = scrub_text(result.model_dump_json(indent=2), self._secrets)
            write_atomic(paths.result, text)
        # What callers see (reports, proposer feedback) is the scrubbed record too.
        return TrialResult.model_validate_json(text) if self._secrets else result

    def _teardown(self, result: TrialResult, sandboxes: list[Sandbox], early: PendingSandbox | None) -> None:
        """Remove the trial's sandboxes, then an early verifier's it never used (waiting for its start: a Ctrl-C in
        that wait leaves its removal to its worker, and must not keep the others up). With ``remove_in_background``
        they go to the reaper instead, and ``teardown`` times the hand-over."""
        if not sandboxes and early is None:
            return
        result.teardown = TimingInfo()
        with _timed(result.teardown):
            if self.reaper is not None:
                self.reaper.remove(sandboxes, early)
                return
            self._stop_all(result, sandboxes)
            if early is not None and (unused := early.take()) is not None:
                self._stop_all(result, [unused])

    @staticmethod
    def _stop_all(result: TrialResult, sandboxes: list[Sandbox]) -> None:
        for sb in sandboxes:
            try:
                sb.stop()
            except Exception as e:
                if result.exception_info is None:
                    result.exception_info = ExceptionInfo.from_exception(e)

    def _agent_phases(
        self,
        task: Task,
        agent: TrialAgent,
        sandbox: Sandbox,
        paths: TrialPaths,
        result: TrialResult | StepResult,
        agent_timeout_sec: float | None,
        sandboxes: list[Sandbox],
    ) -> None:
        timeout = agent_timeout_sec if agent_timeout_sec is not None else task.config.agent.timeout_sec
        user = task.config.agent.user
        seen: Sandbox = sandbox if user is None else AsUser(sandbox, str(user))
        hooks = task.config.verifier.collect
        limit = timeout + self.options.watchdog_grace_sec + collect_limit(hooks)
        with _Watchdog(limit, "agent phase ([agent].timeout_sec)", sandboxes):
            result.agent_setup = TimingInfo()
            with _timed(result.agent_setup):
                agent.setup(seen, task)
            result.agent_execution = TimingInfo()
            try:
                with _timed(result.agent_execution):
                    result.agent_result = agent.run(seen, task, paths.agent_dir, timeout)
                command_sec = result.agent_result.metadata.get("command_sec")
                if isinstance(command_sec, int | float):
                    result.command_seconds["agent"] = float(command_sec)
            except AgentTimeoutError as e:
                # Harbor semantics: an agent that runs out of time is still graded.
                result.exception_info = ExceptionInfo.from_exception(e)
            finally:
                notes = run_collect_hooks(sandbox, hooks)  # [[verifier.collect]]: before the artifacts are copied
                if notes and result.agent_result is not None:
                    result.agent_result.metadata["collect_hook_failures"] = notes
                self._collect_agent_outputs(task, sandbox, paths)

    def _verify(
        self,
        task: Task,
        sandbox: Sandbox,
        mark: int,
        paths: TrialPaths,
        result: TrialResult | StepResult,
        sandboxes: list[Sandbox],
        *,
        keep_agent: bool = False,
        early: PendingSandbox | None = None,
    ) -> None:
        """``keep_agent``: a separate-mode verifier leaves the agent's sandbox up (a multi-step task's next step).
        ``early``: the separate verifier's sandbox, started while the agent worked."""
        cfg = task.config.verifier
        result.verifier = TimingInfo()
        limit = cfg.timeout_sec + self.options.watchdog_grace_sec
        verifier: Verifier | None = None
        removal: AgentRemoval | None = None
        try:
            with _Watchdog(limit, "verifier phase ([verifier].timeout_sec)", sandboxes), _timed(result.verifier):
                before_tests: Callable[[], None] | None = None
                if cfg.environment_mode == "separate":
                    sandbox, removal = self.verifiers.take(
                        task, paths, sandbox, sandboxes, stop_agent=not keep_agent, early=early
                    )
                    before_tests = None if removal is None else removal.join
                else:
                    end_agent_processes(sandbox, mark)
                    self._narrow_network(task, sandbox)
                verifier = Verifier(task, sandbox, paths.verifier_dir, passed_env=self.options.passed_env)
                result.verifier_result = verifier.verify(before_tests=before_tests)
        finally:
            if removal is not None:
                removal.wait()  # never left running past the trial, whatever failed first
            if verifier is not None and verifier.tests_seconds is not None:
                result.command_seconds["tests"] = verifier.tests_seconds

    def _narrow_network(self, task: Task, sandbox: Sandbox) -> None:
        """Shared mode: a verifier with ``network_mode = "no-network"`` loses the agent's network first."""
        if self._network(task.config.verifier_network_mode) or not self._network(task.config.agent_network_mode):
            return
        if not isinstance(sandbox, NetworkControl):
            raise UnsupportedTaskError(
                f"{task.paths.config}: this backend cannot cut a running sandbox's network; use "
                '[verifier] environment_mode = "separate"'
            )
        sandbox.disconnect_network()

    @staticmethod
    def _collect_agent_outputs(task: Task, sandbox: Sandbox, paths: TrialPaths) -> None:
        """/logs/agent and the artifacts, copied out capped; nothing the harness wrote is replaced."""
        staging = paths.root / ".agent-logs"
        try:
            sandbox.download(CONTAINER_LOGS_AGENT, staging)
        except CopyOutLimitError:
            raise
        except SandboxError:
            pass  # no /logs/agent: nothing to keep
        if staging.exists():
            merge_untrusted(staging, paths.agent_dir)
        for artifact in task.config.artifact_paths:
            dest = artifact_dest(paths.artifacts_dir, artifact)
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                sandbox.download(artifact, dest)
            except CopyOutLimitError:
                raise
            except SandboxError:
                pass  # an artifact the agent never made
