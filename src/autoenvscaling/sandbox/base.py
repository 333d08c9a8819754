"""The sandbox contract every backend implements (docker, the in-memory fake).

A sandbox is one container-like place to run commands in. Lifecycle::

    backend.build(...)            -> image reference (cached by content)
    sb = backend.create(spec)     -> Sandbox (not started)
    sb.start()
    sb.exec("make test", timeout=30)  -> ExecResult   (timeout kills the command, not the sandbox)
    sb.upload(Path("tests"), "/tests"); sb.download("/app/out.txt", Path("out.txt"))
    sb.stop()                     -> idempotent; removes the container

Failures of the sandbox itself (engine down, build failed, container gone) raise ``SandboxError``
subclasses. A command that fails inside the sandbox is *not* an error: it is an ``ExecResult``
with a non-zero ``exit_code``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from pydantic import BaseModel, Field

from autoenvscaling.errors import AutoEnvError

LABEL = "autoenvscaling"  # every container/image we create carries this label (the janitor's key)
LABEL_RUN = "autoenvscaling.run"  # run id, so one run's leftovers can be removed alone
LABEL_OWNER_PID = "autoenvscaling.pid"  # creating process; gc skips containers whose creator still lives
DEFAULT_OUTPUT_LIMIT = 1_000_000  # bytes of stdout (and of stderr) kept per exec
DEFAULT_COPY_OUT_MB = 512  # the most one download may bring to the host (the archive, as streamed)


class SandboxError(AutoEnvError):
    """The sandbox infrastructure failed (not the command inside it)."""


class BuildError(SandboxError):
    """An image build failed or timed out. ``log_tail`` holds the last lines of the build log."""

    def __init__(self, message: str, log_tail: str = "", timed_out: bool = False) -> None:
        super().__init__(message)
        self.log_tail = log_tail
        self.timed_out = timed_out


class EngineUnavailableError(SandboxError):
    """The container engine cannot be reached."""


class ImageUnusableError(SandboxError):
    """The task's image cannot host a sandbox (no bash, a USER that does not exist, an ENTRYPOINT that exits).

    The task's fault, not the infrastructure's: validation reports it as a failed check."""


class StorageLimitError(SandboxError):
    """The sandbox wrote more than its storage limit (``storage_mb``) and was removed.

    The task's fault (its image, solution or tests filled the disk), like an out-of-memory kill: validation
    reports it as the failed check ``storage-limit``; a trial that hits it has no reward (it cannot be graded)."""


class CopyOutLimitError(SandboxError):
    """A download from the sandbox exceeded the copy-out cap; nothing past the cap reached the host."""


class ServiceStartError(SandboxError):
    """A service next to the sandbox (a docker-compose service) did not start, exited, or did not become healthy in
    time. An infrastructure error of the trial (no reward), as Harbor fails a trial whose ``compose up`` fails."""


class ExecResult(BaseModel):
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    duration_sec: float = 0.0
    timed_out: bool = False
    truncated: bool = False  # output exceeded the per-call limit; head and tail were kept

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def output(self) -> str:
        """stdout and stderr joined, for showing to an agent or a log."""
        if self.stdout and self.stderr:
            sep = "" if self.stdout.endswith("\n") else "\n"
            return self.stdout + sep + self.stderr
        return self.stdout or self.stderr


class Mount(BaseModel):
    host_path: Path
    container_path: str
    read_only: bool = False


class VolumeMount(BaseModel):
    """A volume of the sandbox's own (a name of ``SandboxSpec.volumes``) mounted at ``target``."""

    volume: str
    target: str
    read_only: bool = False
    no_copy: bool = False  # do not copy the image's files at ``target`` into the empty volume


class TmpfsMount(BaseModel):
    """A tmpfs at ``target``; its size is capped at the container's memory limit (sandbox/volumes.py)."""

    target: str
    size_bytes: int | None = None  # None: the cap
    mode: int | None = None  # None: the engine's (1777)


class ServiceHealthcheck(BaseModel):
    test: list[str]  # the engine's form: ["CMD", ...], ["CMD-SHELL", "cmd"], ["NONE"]
    interval_sec: float = 30.0
    timeout_sec: float = 30.0
    retries: int = 3
    start_period_sec: float = 0.0


class ServiceSpec(BaseModel):
    """A container started next to the sandbox's own, reachable by ``name`` on a network of the sandbox's own.

    ``depends_on``: service name -> "service_started" | "service_healthy" | "service_completed_successfully"."""

    name: str
    image: str
    env: dict[str, str] = Field(default_factory=dict)
    command: list[str] | None = None  # None: the image's CMD
    entrypoint: list[str] | None = None  # None: the image's ENTRYPOINT
    workdir: str | None = None
    user: str | None = None
    healthcheck: ServiceHealthcheck | None = None  # None: the image's HEALTHCHECK, if any
    depends_on: dict[str, str] = Field(default_factory=dict)
    volumes: list[VolumeMount] = Field(default_factory=list)
    tmpfs: list[TmpfsMount] = Field(default_factory=list)


class SandboxSpec(BaseModel):
    """What to start. Built from task.toml by the verifier/roles; backends only read it."""

    image: str
    name_hint: str = "sandbox"  # readable part of the container name
    workdir: str | None = None  # None: the image's WORKDIR
    env: dict[str, str] = Field(default_factory=dict)
    cpus: float | None = None
    memory_mb: int | None = None
    pids_limit: int | None = 1024
    file_size_mb: int | None = None  # the largest file a process may write (RLIMIT_FSIZE); None: unlimited
    # The most the container may write to its filesystem: a quota where the engine has one (xfs), else a watch
    # that removes the container past it (sandbox/storage.py). None: no cap.
    storage_mb: int | None = None
    copy_out_mb: int = DEFAULT_COPY_OUT_MB
    network: bool = True
    mounts: list[Mount] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)
    run_id: str | None = None
    # Multi-container sandboxes (docker-compose): the services, in start order, and what the sandbox's own
    # container waits for; every service gets the limits above. ``network`` False: their network is internal.
    services: list[ServiceSpec] = Field(default_factory=list)
    depends_on: dict[str, str] = Field(default_factory=dict)
    services_timeout_sec: float = 300.0  # for each wait on a service (healthy, completed)
    # Volumes the sandbox creates for itself (labelled, counted against ``storage_mb``, removed at stop), shared by
    # the containers that mount them; ``volume_mounts`` and ``tmpfs`` are the sandbox's own container's.
    volumes: list[str] = Field(default_factory=list)
    volume_mounts: list[VolumeMount] = Field(default_factory=list)
    tmpfs: list[TmpfsMount] = Field(default_factory=list)


class BuildSpec(BaseModel):
    """An image to build from a directory with a Dockerfile."""

    context_dir: Path
    dockerfile: str = "Dockerfile"
    tag: str
    timeout_sec: float = 600.0
    labels: dict[str, str] = Field(default_factory=dict)
    no_cache: bool = False
    args: dict[str, str] = Field(default_factory=dict)  # build args (the Dockerfile's ARG values)


@runtime_checkable
class Sandbox(Protocol):
    @property
    def id(self) -> str: ...

    def start(self) -> None: ...

    def exec(
        self,
        cmd: str,
        *,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        user: str | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> ExecResult: ...

    def upload(self, src: Path, dst: str) -> None:
        """Copy a host file or directory to ``dst`` (the path it will have in the sandbox)."""
        ...

    def upload_text(self, content: str | bytes, dst: str, mode: int = 0o644) -> None: ...

    def download(self, src: str, dst: Path) -> None:
        """Copy a sandbox file or directory to the host path ``dst``."""
        ...

    def stop(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


@runtime_checkable
class NetworkControl(Protocol):
    """A sandbox whose network can be cut while it runs (shared-mode verifiers with ``network_mode = "no-network"``)."""

    def disconnect_network(self) -> None: ...


@runtime_checkable
class ChannelReset(Protocol):
    """A sandbox whose commands travel through long-lived channels (persistent shells) that a process of the same
    user can read and write: steal the next command, forge its end. ``reset_channel`` runs ``script`` as root
    outside them, its exit status reported by the engine (124: it ran past ``timeout``), then kills and replaces
    them."""

    def reset_channel(self, script: str, timeout: float) -> int: ...


@runtime_checkable
class ImageProcesses(Protocol):
    """A backend that can tell whether a sandbox of ``spec`` runs processes of its own before the harness runs any
    command in it: the image's ENTRYPOINT or HEALTHCHECK, a compose task's services. Only such a sandbox can listen
    on its network; the trial runner starts a separate verifier's sandbox early only where nothing listens or no
    network connects it to the agent's (verify/trial.py). ``True`` when it cannot tell."""

    def runs_own_processes(self, spec: SandboxSpec) -> bool: ...


def run_outside_channel(sandbox: Sandbox, script: str, timeout: float) -> int:
    """``script`` as root through ``reset_channel`` where the sandbox has one, else a plain ``exec``."""
    if isinstance(sandbox, ChannelReset):
        return sandbox.reset_channel(script, timeout)
    res = sandbox.exec(script, timeout=timeout, user="0")
    return 124 if res.timed_out else res.exit_code


class SandboxBackend(Protocol):
    name: str

    def build(self, spec: BuildSpec) -> str:
        """Build (or reuse) an image; returns the image reference to put in ``SandboxSpec.image``."""
        ...

    def image_exists(self, ref: str) -> bool: ...

    def create(self, spec: SandboxSpec) -> Sandbox: ...

    def cleanup(self, run_id: str | None = None, *, include_live: bool = False) -> int:
        """Remove sandboxes left behind (by ``run_id``, or all whose creating process is gone)."""
        ...
