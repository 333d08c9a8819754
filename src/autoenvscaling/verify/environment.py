"""From a task to a running sandbox: build (or reuse) the task's image and describe its container."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

from autoenvscaling.errors import UserInputError
from autoenvscaling.images.aliases import alias_image, rewrite_dockerfile
from autoenvscaling.sandbox.base import (
    LABEL,
    BuildSpec,
    SandboxBackend,
    SandboxError,
    SandboxSpec,
    ServiceHealthcheck,
    ServiceSpec,
    TmpfsMount,
    VolumeMount,
)
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.compose import ComposeFile, ComposeService, read_compose
from autoenvscaling.tasks.compose_mounts import TmpfsMount as ComposeTmpfs
from autoenvscaling.tasks.compose_mounts import VolumeMount as ComposeVolume
from autoenvscaling.tasks.config import NetworkMode
from autoenvscaling.tasks.model import iter_task_files
from autoenvscaling.tasks.names import slug
from autoenvscaling.tasks.support import unsupported_features

TASK_IMAGE_REPO = "autoenv-task"
# Limits applied when task.toml is silent (documented in docs/security.md). A task may ask for less or more;
# CPUs are capped at what the host has, since the engine refuses more.
DEFAULT_PIDS_LIMIT = 1024
DEFAULT_CPUS = 2.0
DEFAULT_MEMORY_MB = 4096
DEFAULT_FILE_SIZE_MB = 10240  # the largest single file; [environment].storage_mb lowers (or raises) it
DEFAULT_STORAGE_MB = 10240  # all the container writes to its filesystem; [environment].storage_mb sets it


class UnsupportedTaskError(UserInputError):
    """The task uses a feature this runner refuses (said clearly instead of half-running it)."""


def _slug(text: str) -> str:
    """A task name as part of an image tag (Docker allows no capitals)."""
    return slug(text, lower=True, max_len=60)


def environment_hash(env_dir: Path, extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for path in iter_task_files(env_dir):
        h.update(path.relative_to(env_dir).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def check_supported(task: Task, *, agent_facing: bool = False) -> None:
    """Refuse, naming the feature, a task that uses something this runner would otherwise skip (tasks/support.py).

    ``agent_facing``: the trial's agent is not the oracle or nop, so agent-only features count too."""
    cfg = task.config
    found = unsupported_features(task.paths, cfg, agent_facing=agent_facing)
    if found:
        more = f" (and {len(found) - 1} more unsupported feature(s))" if len(found) > 1 else ""
        raise UnsupportedTaskError(f"{task.paths.root.name}: {found[0].message}{more}")
    shared = cfg.verifier.environment_mode == "shared"
    if shared and cfg.agent_network_mode == NetworkMode.NO_NETWORK != cfg.verifier_network_mode:
        raise UnsupportedTaskError(
            f"{task.paths.config}: a shared-mode verifier cannot get a network the agent did not have; "
            'use [verifier] environment_mode = "separate"'
        )


class EnvironmentBuilder:
    """Builds task images once per content hash (thread-safe: concurrent trials of a task share one build)."""

    def __init__(
        self, backend: SandboxBackend, aliases: dict[str, str] | None = None, force_build: bool = False
    ) -> None:
        self.backend = backend
        self.aliases = dict(aliases or {})
        self.force_build = force_build
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._built: set[str] = set()

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def image_for(self, task: Task) -> str:
        """The main container's image; a multi-container task's service images are built (or found) too."""
        check_supported(task)
        image = self._main_image(task)
        compose = compose_of(task)
        for svc in compose.services if compose is not None else []:
            self._service_image(task, svc)
        return image

    def _main_image(self, task: Task) -> str:
        prebuilt = task.config.environment.docker_image
        has_dockerfile = task.paths.dockerfile.is_file()
        if prebuilt and (not has_dockerfile or not self.force_build):
            image = alias_image(prebuilt, self.aliases)
            if self.backend.image_exists(image) or not has_dockerfile:
                if not self.backend.image_exists(image):
                    raise SandboxError(
                        f"{task.paths.config}: image {image!r} is not available here; "
                        f"use --image-alias {prebuilt}=<local image>"
                    )
                return image
        if not has_dockerfile:
            raise UserInputError(f"{task.paths.dockerfile}: missing (and no [environment].docker_image)")
        return self._build(task, task.paths.environment_dir, "Dockerfile", _slug(task.name))

    def _service_image(self, task: Task, svc: ComposeService) -> str:
        """A compose service's image: built from its context inside environment/, or a local image (never pulled)."""
        if svc.build_context is not None:
            context = task.paths.environment_dir / svc.build_context
            return self._build(task, context, svc.dockerfile, f"{_slug(task.name)}-{svc.name}", svc.build_args)
        assert svc.image is not None  # tasks/compose.py: an image or a build
        image = alias_image(svc.image, self.aliases)
        if not self.backend.image_exists(image):
            raise SandboxError(
                f"{task.paths.compose_file}: image {image!r} of service {svc.name!r} is not available here (nothing "
                f"is pulled); use --image-alias {svc.image}=<local image>"
            )
        return image

    def _build(
        self, task: Task, context_dir: Path, dockerfile: str, name: str, args: dict[str, str] | None = None
    ) -> str:
        text = (context_dir / dockerfile).read_text(encoding="utf-8", errors="replace")
        rewritten, applied = rewrite_dockerfile(text, self.aliases)
        extra = repr(applied) if dockerfile == "Dockerfile" else f"{applied!r}{dockerfile}"
        extra += repr(sorted(args.items())) if args else ""  # other build args, another image
        tag = f"{TASK_IMAGE_REPO}/{name}:{environment_hash(context_dir, extra=extra)}"
        with self._lock(tag):
            if tag in self._built or (not self.force_build and self.backend.image_exists(tag)):
                self._built.add(tag)
                return tag
            with tempfile.TemporaryDirectory(prefix="autoenv-build-") as tmp:
                context = Path(tmp) / "context"
                shutil.copytree(context_dir, context, symlinks=True)
                (context / dockerfile).write_text(rewritten, encoding="utf-8")
                spec = BuildSpec(
                    context_dir=context,
                    dockerfile=dockerfile,
                    tag=tag,
                    timeout_sec=task.config.environment.build_timeout_sec,
                    labels={LABEL: "1", "autoenvscaling.task": task.display_name},
                    no_cache=self.force_build,
                    args=dict(args or {}),
                )
                self.backend.build(spec)
            self._built.add(tag)
            return tag

    def spec_for(
        self, task: Task, image: str, *, name_hint: str, run_id: str | None = None, network: bool | None = None
    ) -> SandboxSpec:
        """The main container, and a multi-container task's services (started next to it, on its network)."""
        env_cfg = task.config.environment
        compose = compose_of(task)
        services = [service_spec(svc, self._service_image(task, svc)) for svc in compose.services] if compose else []
        return SandboxSpec(
            image=image,
            name_hint=name_hint,
            workdir=env_cfg.workdir,
            # As in Harbor: the compose file's environment for main, task.toml's [environment].env over it.
            env={**(compose.main.environment if compose else {}), **env_cfg.env},
            cpus=min(env_cfg.cpus or DEFAULT_CPUS, float(os.cpu_count() or 1)),
            memory_mb=env_cfg.memory_mb or DEFAULT_MEMORY_MB,
            file_size_mb=env_cfg.storage_mb or DEFAULT_FILE_SIZE_MB,
            storage_mb=env_cfg.storage_mb or DEFAULT_STORAGE_MB,
            pids_limit=DEFAULT_PIDS_LIMIT,
            network=task.config.network_enabled if network is None else network,
            run_id=run_id,
            labels={"autoenvscaling.task": task.display_name},
            services=services,
            depends_on={name: c.value for name, c in compose.main.depends_on.items()} if compose else {},
            volumes=list(compose.volumes) if compose else [],
            volume_mounts=_volume_mounts(compose.main.volumes) if compose else [],
            tmpfs=_tmpfs(compose.main.tmpfs) if compose else [],
        )


def compose_of(task: Task) -> ComposeFile | None:
    """The task's environment/docker-compose.yaml as models (None without one); refused files raise."""
    compose, problems = read_compose(task.paths.environment_dir)
    if problems:
        raise UnsupportedTaskError(
            f"{task.paths.root.name}: environment/docker-compose.yaml: {problems[0].key}: {problems[0].why}"
        )
    return compose


def service_spec(svc: ComposeService, image: str) -> ServiceSpec:
    hc = svc.healthcheck
    return ServiceSpec(
        name=svc.name,
        image=image,
        env=dict(svc.environment),
        command=svc.command,
        entrypoint=svc.entrypoint,
        workdir=svc.working_dir,
        user=svc.user,
        healthcheck=ServiceHealthcheck.model_validate(hc.model_dump()) if hc is not None else None,
        depends_on={name: c.value for name, c in svc.depends_on.items()},
        volumes=_volume_mounts(svc.volumes),
        tmpfs=_tmpfs(svc.tmpfs),
    )


def _volume_mounts(mounts: list[ComposeVolume]) -> list[VolumeMount]:
    return [VolumeMount(volume=m.source, target=m.target, read_only=m.read_only, no_copy=m.no_copy) for m in mounts]


def _tmpfs(mounts: list[ComposeTmpfs]) -> list[TmpfsMount]:
    return [TmpfsMount(target=m.target, size_bytes=m.size_bytes, mode=m.mode) for m in mounts]
