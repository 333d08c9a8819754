"""A sandbox as one Docker container: kept alive by ``sleep infinity`` under an init, driven by persistent shells."""

from __future__ import annotations

import contextlib
import posixpath
import re
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import docker
import docker.errors
import docker.types

from autoenvscaling.sandbox import archive
from autoenvscaling.sandbox.base import (
    DEFAULT_OUTPUT_LIMIT,
    LABEL,
    LABEL_RUN,
    ExecResult,
    ImageUnusableError,
    SandboxError,
    SandboxSpec,
    StorageLimitError,
)
from autoenvscaling.sandbox.engine import engine_errors, exec_status, writable_layer_size
from autoenvscaling.sandbox.janitor import owner_labels
from autoenvscaling.sandbox.shell import BashShell
from autoenvscaling.sandbox.storage import MB, StorageWatch
from autoenvscaling.sandbox.volumes import tmpfs_options

DOCKER_SOCKETS = (Path("/var/run/docker.sock"), Path("/run/docker.sock"))
_STOP_WAIT_SEC = 10.0
_GO_MODE_DIR = 1 << 31  # os.ModeDir in the stat header of the archive API
# Docker's default set minus what no task needs (raw sockets, device nodes, chroot, file capabilities, audit).
KEPT_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "NET_BIND_SERVICE")
# Engine messages that mean the image itself cannot host a sandbox (the task's fault, not ours).
_IMAGE_FAULTS = re.compile(
    r"unable to find (user|group)|no matching entries in (passwd|group) file|executable file not found"
    r'|exec format error|exec: "[^"]*": (stat [^:]*: )?no such file or directory',
    re.IGNORECASE,
)


def check_mounts(spec: SandboxSpec) -> None:
    """No sandbox ever sees the Docker socket: that would hand it the host."""
    sockets = {p for s in DOCKER_SOCKETS for p in (s, s.resolve())}
    for m in spec.mounts:
        host = m.host_path.resolve()
        if Path(m.container_path) in DOCKER_SOCKETS or any(s == host or host in s.parents for s in sockets):
            raise SandboxError(f"refusing to mount {m.host_path} -> {m.container_path}: it exposes the Docker socket")


_ROOT_NAMES = ("", "root", "0", "0:0", "root:root", "root:0", "0:root")
_DEFAULT = ""  # key of the shell running as the image's user


def _same_user(a: str, b: str) -> bool:
    return a == b or (a in _ROOT_NAMES and b in _ROOT_NAMES)


def _container_name(hint: str) -> str:
    clean = re.sub(r"[^a-zA-Z0-9_.-]+", "-", hint).strip("-.")[:40] or "sandbox"
    return f"aes-{clean}-{secrets.token_hex(4)}"


class DockerSandbox:
    """One container. ``quota``: the engine enforces ``storage_mb`` itself (``--storage-opt size=``); otherwise a
    ``StorageWatch`` removes the container once its writable layer passes ``storage_mb``."""

    def __init__(self, client: docker.DockerClient, spec: SandboxSpec, *, quota: bool = False) -> None:
        check_mounts(spec)
        self.spec = spec
        self.quota = quota
        self._client = client
        self._api: Any = client.api
        self._name = _container_name(spec.name_hint)
        self._container_id: str | None = None
        self._default_user = ""
        self._shells: dict[str, BashShell] = {}  # by user; _DEFAULT is the image's user
        self._lock = threading.Lock()  # one exec (or copy) at a time
        self._stopped = False
        self._storage: StorageWatch | None = None
        self._storage_error: str | None = None  # set when the watch removed the container

    @property
    def id(self) -> str:
        return self._name

    @property
    def container_id(self) -> str | None:
        return self._container_id

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> None:
        if self._stopped:
            raise SandboxError(f"sandbox {self._name} was stopped; create a new one")
        if self._container_id is not None:
            return
        try:
            self._start_container()
            self._watch_storage()
            with self._lock, engine_errors(f"starting a shell in sandbox {self._name}"):
                try:
                    self._shell(_DEFAULT).start()
                except (docker.errors.APIError, SandboxError) as e:
                    if isinstance(e, ImageUnusableError) or self._is_running():
                        raise
                    raise self._exited() from None  # the ENTRYPOINT exited just after the check in _start_container
        except BaseException:
            if self._container_id is not None:  # never leave a half-started container behind
                with contextlib.suppress(SandboxError):
                    self.stop()
            raise

    def _start_container(self) -> None:
        with engine_errors(f"starting sandbox {self._name} from {self.spec.image}"):
            try:
                container = self._create(self._create_kwargs())
            except docker.errors.ImageNotFound:
                raise SandboxError(
                    f"image {self.spec.image} not found: build it, or run `autoenv images bootstrap`"
                ) from None
            self._container_id = container.id
            try:
                container.start()
            except docker.errors.APIError as e:
                text = str(e.explanation or e)
                if _IMAGE_FAULTS.search(text):
                    raise ImageUnusableError(f"the image {self.spec.image} cannot start: {text}") from None
                raise
            container.reload()
            self._default_user = container.attrs["Config"].get("User") or ""
            if not self._is_running():
                raise self._exited()

    def _exited(self) -> ImageUnusableError:
        try:
            logs = self._api.logs(self._container_id, tail=20).decode(errors="replace").strip()
        except docker.errors.DockerException:
            logs = ""
        return ImageUnusableError(
            f"sandbox {self._name} exited right after start (does the image's ENTRYPOINT exit instead of "
            f"running its command?): {logs or 'no output'}"
        )

    def _create(self, kwargs: dict[str, Any]) -> Any:
        try:
            return self._client.containers.create(**kwargs)
        except docker.errors.APIError as e:
            # xfs without project quotas: the watch caps the writable layer instead (see _watch_storage).
            if "storage_opt" not in kwargs or "storage-opt" not in str(e.explanation or e):
                raise
        kwargs.pop("storage_opt")
        self.quota = False
        return self._client.containers.create(**kwargs)

    def _create_kwargs(self) -> dict[str, Any]:
        spec = self.spec
        labels = {**spec.labels, LABEL: "1", **owner_labels()}
        if spec.run_id:
            labels[LABEL_RUN] = spec.run_id
        mounts = []
        for m in spec.mounts:
            host = m.host_path.resolve()
            if not host.exists():
                host.mkdir(parents=True)  # like `docker run -v`: a missing host path becomes a directory
            mounts.append(docker.types.Mount(m.container_path, str(host), type="bind", read_only=m.read_only))
        kwargs: dict[str, Any] = {
            "image": spec.image,
            "command": ["sleep", "infinity"],  # keeps the container up; the image's ENTRYPOINT still runs first
            "name": self._name,
            "detach": True,
            "init": True,  # an init as PID 1 forwards signals and reaps: stop takes ~0.2 s instead of 10 s
            "labels": labels,
            "environment": dict(spec.env),
            "mounts": mounts,
            "pids_limit": spec.pids_limit,
            "cap_drop": ["ALL"],
            "cap_add": list(KEPT_CAPABILITIES),
            "security_opt": ["no-new-privileges"],
        }
        if spec.storage_mb and self.quota:
            kwargs["storage_opt"] = {"size": f"{spec.storage_mb}M"}
        if spec.file_size_mb:
            size = spec.file_size_mb * 1024 * 1024
            kwargs["ulimits"] = [docker.types.Ulimit(name="fsize", soft=size, hard=size)]
        if spec.workdir:
            kwargs["working_dir"] = spec.workdir
        if not spec.network:
            kwargs["network_mode"] = "none"
        if spec.cpus:
            kwargs["nano_cpus"] = int(spec.cpus * 1e9)
        if spec.memory_mb:
            kwargs["mem_limit"] = f"{spec.memory_mb}m"
        if spec.tmpfs:
            kwargs["tmpfs"] = tmpfs_options(spec.tmpfs, spec.memory_mb)
        return kwargs

    def stop(self) -> None:
        """Remove the container. Idempotent; safe while another thread is inside ``exec``."""
        if self._stopped:
            return
        self._stopped = True
        if self._storage is not None:
            self._storage.stop()
        if self._container_id is not None:
            with engine_errors(f"removing sandbox {self._name}"):
                try:
                    self._api.remove_container(self._container_id, force=True, v=True)
                except docker.errors.NotFound:
                    pass
                except docker.errors.APIError as e:
                    if "already in progress" not in str(e):
                        raise
        for shell in list(self._shells.values()):
            shell.interrupt()  # wakes an exec blocked on the socket
        if self._lock.acquire(timeout=_STOP_WAIT_SEC):
            try:
                for shell in self._shells.values():
                    shell.close()
                self._shells.clear()
            finally:
                self._lock.release()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- commands ------------------------------------------------------------------------------------------
    def exec(
        self,
        cmd: str,
        *,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        user: str | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> ExecResult:
        with self._lock:
            self._check_usable()
            default = not user or _same_user(user, self._default_user)
            shell = self._shell(_DEFAULT if default or not user else user)
            try:
                result = shell.run(
                    cmd, timeout=timeout, env=env, cwd=cwd, output_limit=output_limit, is_running=self._is_running
                )
            except SandboxError:
                if self._storage_error is not None:
                    raise StorageLimitError(self._storage_error) from None
                if self._stopped:
                    raise SandboxError(f"sandbox {self._name} was stopped during the command") from None
                raise
        if self._storage is not None and self._storage.check() is not None:
            self._raise_if_over_storage()  # a burst written by this command, caught before the caller goes on
        return result

    def _shell(self, user: str) -> BashShell:
        assert self._container_id is not None
        if user not in self._shells:
            self._shells[user] = BashShell(self._api, self._container_id, user or None)
        return self._shells[user]

    def _check_usable(self) -> None:
        self._raise_if_over_storage()
        if self._stopped:
            raise SandboxError(f"sandbox {self._name} is stopped")
        if self._container_id is None:
            raise SandboxError(f"sandbox {self._name} is not started; call start() first")

    def reset_channel(self, script: str, timeout: float) -> int:
        """``script`` as root in its own exec (not a persistent shell, whose pipes a process of the shell's user can
        read and write), then every persistent shell is killed and forgotten: the next command gets a fresh one."""
        with self._lock, engine_errors(f"running a command outside the shells of {self._name}"):
            self._check_usable()
            # The shells go first (so none runs a command slipped into its stdin meanwhile); the script runs in a
            # subshell, so its own `exit` ends only that.
            pids = " ".join(str(s.pid) for s in self._shells.values() if s.pid)
            argv = ["bash", "-c", (f"kill -KILL {pids} 2>/dev/null\n" if pids else "") + f"(\n{script}\n)"]
            assert self._container_id is not None
            code = exec_status(self._api, self._container_id, argv, timeout)
            for shell in self._shells.values():
                shell.close()
            self._shells.clear()
            return code

    # -- storage -------------------------------------------------------------------------------------------
    def _watch_storage(self) -> None:
        if not self.spec.storage_mb or self.quota:
            return
        self._storage = StorageWatch(
            self.writable_layer_bytes, self.spec.storage_mb * MB, self._over_storage, name=self._name
        )
        self._storage.start()

    def writable_layer_bytes(self) -> int | None:
        """What the container wrote to its writable layer (Docker's ``SizeRw``); None once it is gone."""
        if self._stopped or self._container_id is None:
            return None
        return writable_layer_size(self._api, self._container_id)

    def _over_storage(self, used: int) -> None:
        self._storage_error = (
            f"sandbox {self._name} wrote {used / MB:.0f} MB to its filesystem, over its storage limit of "
            f"{self.spec.storage_mb} MB ([environment].storage_mb); it was removed"
        )
        with contextlib.suppress(SandboxError):
            self.stop()

    def _raise_if_over_storage(self) -> None:
        if self._storage_error is not None:
            raise StorageLimitError(self._storage_error)

    def disconnect_network(self) -> None:
        """Cut every network of the running container (lo stays)."""
        with self._lock, engine_errors(f"disconnecting {self._name} from its networks"):
            self._check_usable()
            networks = self._api.inspect_container(self._container_id)["NetworkSettings"]["Networks"] or {}
            for name in networks:
                if name != "none":
                    self._api.disconnect_container_from_network(self._container_id, name, force=True)
        self.spec = self.spec.model_copy(update={"network": False})

    def _is_running(self) -> bool:
        if self._stopped or self._container_id is None:
            return False
        try:
            return bool(self._api.inspect_container(self._container_id)["State"]["Running"])
        except docker.errors.DockerException:
            return False

    # -- files ---------------------------------------------------------------------------------------------
    def _put(self, directory: str, data: Any) -> None:
        """put_archive into ``directory``, creating it (as root, like `mkdir -p`) when missing."""
        with self._lock, engine_errors(f"copying into {self._name}:{directory}"):
            self._check_usable()
            try:
                self._api.put_archive(self._container_id, directory, data)
                return
            except docker.errors.NotFound:
                pass
            assert self._container_id is not None
            if exec_status(self._api, self._container_id, ["mkdir", "-p", "--", directory], timeout=60) != 0:
                raise SandboxError(f"cannot create {directory} in sandbox {self._name}")
            if hasattr(data, "seek"):
                data.seek(0)
            self._api.put_archive(self._container_id, directory, data)

    def upload(self, src: Path, dst: str) -> None:
        if not src.exists():
            raise SandboxError(f"cannot upload {src}: no such file or directory")
        if not src.is_dir():
            dst = dst + src.name if dst.endswith("/") else dst
        # A directory goes into its parent under its own name, so a missing dst (the common case: /tests,
        # /solution) costs no extra `mkdir` exec; the parent of an absolute path almost always exists.
        target = dst.rstrip("/") or "/"
        if src.is_dir() and target == "/":
            directory, name = "/", ""
        else:
            directory, name = posixpath.dirname(target) or "/", posixpath.basename(target)
        with archive.pack_path(src, name) as data:
            self._put(directory, data)

    def upload_text(self, content: str | bytes, dst: str, mode: int = 0o644) -> None:
        data = content.encode() if isinstance(content, str) else content
        self._put(posixpath.dirname(dst) or "/", archive.pack_bytes(data, posixpath.basename(dst), mode))

    def download(self, src: str, dst: Path) -> None:
        with self._lock, engine_errors(f"copying {self._name}:{src} out"):
            self._check_usable()
            for _ in range(8):  # follow symbolic links, a few levels deep
                try:
                    chunks, stat = self._api.get_archive(self._container_id, src)
                except docker.errors.NotFound:
                    raise SandboxError(f"cannot download {src} from {self._name}: no such file") from None
                target = stat.get("linkTarget") or ""
                if not target:
                    break
                src = posixpath.join(posixpath.dirname(src.rstrip("/")), target)
            limit = self.spec.copy_out_mb * 1024 * 1024
            data = archive.spool(chunks, limit, what=f"{self._name}:{src}")
        with data:
            if stat["mode"] & _GO_MODE_DIR:
                archive.unpack_dir(data, stat["name"], dst)
                return
            name = posixpath.basename(posixpath.normpath(src))
            if dst.is_dir() and name in ("", ".", ".."):
                raise SandboxError(f"cannot download {src}: it names no file")
            archive.unpack_file(data, dst / name if dst.is_dir() else dst)
