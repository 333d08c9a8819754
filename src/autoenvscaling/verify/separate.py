"""The separate verifier's sandbox (Harbor's ``environment_mode = "separate"``): a fresh container of the task's
pristine image that holds only the declared artifacts when the tests run.

Off the critical path: a single-step task's verifier container starts in a worker while the agent works, where
nothing in it could be reached from the agent's container (no network between them, or nothing in it listening: no
ENTRYPOINT, HEALTHCHECK or services); the artifacts go in only after the agent phase, and the agent's container is
removed while they are copied in, always before the tests run (``AgentRemoval.join``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from autoenvscaling.sandbox.base import ImageProcesses, Sandbox, SandboxBackend, SandboxSpec
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.config import NetworkMode
from autoenvscaling.tasks.paths import CONTAINER_LOGS_AGENT, CONTAINER_LOGS_ARTIFACTS, CONTAINER_LOGS_VERIFIER
from autoenvscaling.verify.confine import artifact_dest
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.paths import TrialPaths
from autoenvscaling.verify.prewarm import PendingSandbox

# As root (whatever the image's user), and writable by the agent's user; /logs/verifier is recreated before the tests.
MKDIR_LOGS = (
    f"mkdir -p {CONTAINER_LOGS_AGENT} {CONTAINER_LOGS_VERIFIER} {CONTAINER_LOGS_ARTIFACTS}"
    f" && chmod 0777 {CONTAINER_LOGS_AGENT} {CONTAINER_LOGS_ARTIFACTS}"
)


def started(sandbox: Sandbox) -> Sandbox:
    """``sandbox`` started, or removed when its start fails."""
    try:
        sandbox.start()
    except BaseException:
        sandbox.stop()
        raise
    return sandbox


class AgentRemoval:
    """The agent's sandbox being removed in a thread while the separate verifier's is prepared; ``join`` (before the
    tests run) waits for it and raises what the removal raised."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._sandbox = sandbox
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"remove {sandbox.id}", daemon=False)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._sandbox.stop()
        except BaseException as e:
            self._error = e

    def wait(self) -> None:
        self._thread.join()

    def join(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error


class VerifierSandboxes:
    """Makes the separate verifier's sandboxes of one ``TrialRunner``. ``network(mode)``: whether a phase with that
    network mode gets a network under the runner's options."""

    def __init__(
        self,
        backend: SandboxBackend,
        builder: EnvironmentBuilder,
        run_id: str | None,
        network: Callable[[NetworkMode], bool],
        *,
        prestart: bool,
    ) -> None:
        self.backend = backend
        self.builder = builder
        self.run_id = run_id
        self.network = network
        self.prestart = prestart
        self._early = ThreadPoolExecutor(max_workers=8, thread_name_prefix="verifier-start")

    def close(self) -> None:
        self._early.shutdown(wait=True)  # early verifier starts still under way (their trials removed them)

    def spec(self, task: Task, paths: TrialPaths) -> SandboxSpec:
        return self.builder.spec_for(
            task,
            self.builder.image_for(task),
            name_hint=f"{paths.root.name}__verifier",
            run_id=self.run_id,
            network=self.network(task.config.verifier_network_mode),
        )

    def start_early(self, task: Task, paths: TrialPaths) -> PendingSandbox | None:
        """A single-step separate verifier's sandbox, started in a worker while the agent works."""
        cfg = task.config
        if not self.prestart or cfg.is_multi_step or cfg.verifier.environment_mode != "separate":
            return None
        try:
            return PendingSandbox(self._early.submit(self._early_start, task, paths))
        except RuntimeError:  # the runner is closed (or the interpreter exiting): start it when needed
            return None

    def _early_start(self, task: Task, paths: TrialPaths) -> Sandbox | None:
        spec = self.spec(task, paths)
        # Where one network joins it to the agent's container, only a sandbox with nothing of its own listening may
        # exist while the agent works (an ENTRYPOINT's server could be primed by the agent's processes).
        joined = spec.network and self.network(task.config.agent_network_mode)
        if joined and (not isinstance(self.backend, ImageProcesses) or self.backend.runs_own_processes(spec)):
            return None
        sandbox = started(self.backend.create(spec))
        try:
            sandbox.exec(MKDIR_LOGS, timeout=30, user="0")
        except BaseException:
            sandbox.stop()
            raise
        return sandbox

    def take(
        self,
        task: Task,
        paths: TrialPaths,
        agent_sandbox: Sandbox,
        sandboxes: list[Sandbox],
        *,
        stop_agent: bool,
        early: PendingSandbox | None = None,
    ) -> tuple[Sandbox, AgentRemoval | None]:
        """A fresh container of the same image holding only the declared artifacts, appended to ``sandboxes``.

        With one started early, the agent's sandbox is removed while the artifacts and tests go in; the returned
        removal must be joined before the tests run. Else it is removed first, then the fresh one starts."""
        sandbox = early.take() if early is not None else None
        removal: AgentRemoval | None = None
        if sandbox is not None:
            sandboxes.append(sandbox)
            removal = AgentRemoval(agent_sandbox) if stop_agent else None
        else:
            if stop_agent:
                agent_sandbox.stop()
            sandbox = self.backend.create(self.spec(task, paths))
            sandboxes.append(sandbox)
            started(sandbox)
            sandbox.exec(MKDIR_LOGS, timeout=30, user="0")
        try:
            for artifact in task.config.artifact_paths:
                src = artifact_dest(paths.artifacts_dir, artifact)
                if src.exists():
                    sandbox.upload(src, artifact)
        except BaseException:
            if removal is not None:
                removal.wait()
            raise
        return sandbox, removal
