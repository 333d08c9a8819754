"""Harbor's ``environment/docker-compose.yaml``, read as untrusted input.

Harbor runs a task as a compose project of three files merged in order: its base file (log mounts, limits), its
build file (service ``main`` built from ``environment/`` or the prebuilt ``docker_image``, kept up by
``sleep infinity``), then the task's own file, which adds services and may override ``main``'s keys. Here
``main`` is the task's sandbox as always (image, limits, network policy from task.toml); the task's file may give
``main`` extra ``environment`` (and ``env_file``), ``depends_on``, volumes and tmpfs mounts, and declares the other
services and the named volumes each trial creates for itself.

Only a small set of keys is understood. Any other key, and every value we could not honour exactly (a host path,
a host variable, a privilege), is a :class:`ComposeProblem` naming the key: the task is refused rather than run
without it. Services are started by the sandbox layer (``sandbox/compose_sandbox.py``); no compose binary is used.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from pydantic import BaseModel, Field

from autoenvscaling.tasks.compose_envfile import env_files
from autoenvscaling.tasks.compose_keys import MAIN_KEYS, REFUSED_KEYS, SERVICE_KEYS, TOP_LEVEL_IGNORED, refusal
from autoenvscaling.tasks.compose_mounts import (
    MAX_VOLUMES,
    TmpfsMount,
    VolumeMount,
    check_mounts,
    declared_volumes,
    service_tmpfs,
    service_volumes,
)

MAIN = "main"
MAX_COMPOSE_BYTES = 256 * 1024
MAX_SERVICES = 8  # besides main
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|us|ns|m|s)")
_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


class _Loader(yaml.SafeLoader):
    """YAML 1.2's booleans, as compose reads them: only true/false (``off``, ``no``, ``yes`` stay strings)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _first in "tTfF":
    _Loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list(_first)
    )


class Condition(StrEnum):
    STARTED = "service_started"
    HEALTHY = "service_healthy"
    COMPLETED = "service_completed_successfully"


class ComposeHealthcheck(BaseModel):
    """Docker's HEALTHCHECK: ``test`` in the engine's form (``["CMD", ...]``, ``["CMD-SHELL", cmd]``, ``["NONE"]``)."""

    test: list[str]
    interval_sec: float = 30.0
    timeout_sec: float = 30.0
    retries: int = 3
    start_period_sec: float = 0.0


class ComposeService(BaseModel):
    name: str
    image: str | None = None
    build_context: str | None = None  # relative to environment/, inside it
    dockerfile: str = "Dockerfile"  # relative to the build context
    build_args: dict[str, str] = Field(default_factory=dict)
    environment: dict[str, str] = Field(default_factory=dict)  # its env_file's variables, environment over them
    command: list[str] | None = None
    entrypoint: list[str] | None = None
    working_dir: str | None = None
    user: str | None = None
    healthcheck: ComposeHealthcheck | None = None
    depends_on: dict[str, Condition] = Field(default_factory=dict)
    volumes: list[VolumeMount] = Field(default_factory=list)
    tmpfs: list[TmpfsMount] = Field(default_factory=list)


class ComposeFile(BaseModel):
    main: ComposeService  # only ``environment``, ``depends_on``, ``volumes`` and ``tmpfs`` are read from it
    services: list[ComposeService]  # in start order (dependencies first)
    volumes: list[str] = Field(default_factory=list)  # the volumes each trial creates: those mounted somewhere


@dataclass(frozen=True)
class ComposeProblem:
    """Why the file cannot run here: ``key`` is the dotted path in the file (``services.db.privileged``)."""

    key: str
    why: str
    harbor: str | None = None  # Harbor 0.26's lint rule for the same problem, if it has one


class _Reader:
    """Collects problems while turning the YAML tree into models; every accessor returns None on a problem."""

    def __init__(self) -> None:
        self.problems: list[ComposeProblem] = []

    def problem(self, key: str, why: str, harbor: str | None = None) -> None:
        self.problems.append(ComposeProblem(key, why, harbor))

    def literal(self, key: str, value: Any) -> str | None:
        """A scalar as compose passes it on; ``$$`` is a ``$``, any other ``$`` would read the host's variables."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)
        if not isinstance(value, str):
            self.problem(key, f"expected a string, got {type(value).__name__}")
            return None
        if "$" in value.replace("$$", ""):
            self.problem(key, "variable interpolation (${VAR}) is not supported: host variables never reach a task")
            return None
        return value.replace("$$", "$")

    def words(self, key: str, value: Any) -> list[str] | None:
        """``command`` / ``entrypoint``: a list of strings, or one string split as compose splits it."""
        if isinstance(value, str):
            text = self.literal(key, value)
            try:
                return None if text is None else shlex.split(text)
            except ValueError as e:
                self.problem(key, f"cannot split {value!r}: {e}")
                return None
        if isinstance(value, list):
            items = [self.literal(f"{key}[{i}]", v) for i, v in enumerate(value)]
            return None if any(i is None for i in items) else [i for i in items if i is not None]
        self.problem(key, "expected a string or a list of strings")
        return None

    def environment(self, key: str, value: Any) -> dict[str, str]:
        pairs: list[tuple[str, Any]] = []
        if isinstance(value, dict):
            pairs = [(str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            for i, item in enumerate(value):
                name, sep, rest = str(item).partition("=")
                pairs.append((name, rest if sep else None))
                if not isinstance(item, str):
                    self.problem(f"{key}[{i}]", "expected NAME=value")
        else:
            self.problem(key, "expected a mapping or a list of NAME=value")
        env: dict[str, str] = {}
        for name, raw in pairs:
            if raw is None:
                self.problem(f"{key}.{name}", "a variable without a value is taken from the host: not supported")
                continue
            text = self.literal(f"{key}.{name}", raw)
            if text is not None:
                env[name] = text
        return env

    def duration(self, key: str, value: Any, default: float) -> float:
        if value is None:
            return default
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return float(value)
        text = str(value).strip()
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            self.problem(key, f"not a duration: {value!r} (use 30s, 1m30s, 500ms)")
            return default
        return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)

    def healthcheck(self, key: str, value: Any) -> ComposeHealthcheck | None:
        if not isinstance(value, dict):
            self.problem(key, "expected a mapping")
            return None
        known = {"test", "interval", "timeout", "retries", "start_period", "start_interval", "disable"}
        for sub in value:
            if sub not in known:
                self.problem(f"{key}.{sub}", "not a healthcheck key we run")
        if value.get("disable") is True:
            return ComposeHealthcheck(test=["NONE"])
        test = value.get("test")
        if isinstance(test, str):
            text = self.literal(f"{key}.test", test)
            words = None if text is None else ["CMD-SHELL", text]
        else:
            words = self.words(f"{key}.test", test)
            if words is not None and (not words or words[0] not in ("CMD", "CMD-SHELL", "NONE")):
                self.problem(f"{key}.test", 'a list must start with "CMD", "CMD-SHELL" or "NONE"')
                words = None
        retries = value.get("retries", 3)
        if not isinstance(retries, int) or isinstance(retries, bool) or not 1 <= retries <= 100:
            self.problem(f"{key}.retries", "expected a whole number from 1 to 100")
            retries = 3
        if words is None:
            return None
        return ComposeHealthcheck(
            test=words,
            interval_sec=self.duration(f"{key}.interval", value.get("interval"), 30.0),
            timeout_sec=self.duration(f"{key}.timeout", value.get("timeout"), 30.0),
            retries=retries,
            start_period_sec=self.duration(f"{key}.start_period", value.get("start_period"), 0.0),
        )  # start_interval: the engines we target (API < 1.44) ignore it; the interval applies from the start

    def depends_on(self, key: str, value: Any) -> dict[str, Condition]:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return dict.fromkeys(value, Condition.STARTED)
        if not isinstance(value, dict):
            self.problem(key, "expected a list of service names or a mapping of them to conditions")
            return {}
        deps: dict[str, Condition] = {}
        for name, spec in value.items():
            spec = spec or {}
            if not isinstance(spec, dict):
                self.problem(f"{key}.{name}", "expected a mapping with a condition")
                continue
            for sub in spec:
                if sub not in ("condition", "required", "restart"):
                    self.problem(f"{key}.{name}.{sub}", "not a depends_on key we run")
            try:
                deps[str(name)] = Condition(spec.get("condition", Condition.STARTED.value))
            except ValueError:
                self.problem(f"{key}.{name}.condition", f"unknown condition {spec.get('condition')!r}")
        return deps


def _service(r: _Reader, name: str, body: Any, env_dir: Path | None, volumes: set[str]) -> ComposeService | None:
    key = f"services.{name}"
    if not isinstance(body, dict):
        r.problem(key, "expected a mapping")
        return None
    allowed = MAIN_KEYS if name == MAIN else SERVICE_KEYS
    for sub, value in body.items():
        if sub not in allowed or sub in ("platform", "restart", "init"):
            why, harbor = refusal(name, str(sub), value)
            if why is not None:
                r.problem(f"{key}.{sub}", why, harbor)
    svc = ComposeService(name=name)
    if "env_file" in body:
        svc.environment = env_files(r, name, body["env_file"], env_dir)
    if "environment" in body:
        svc.environment |= r.environment(f"{key}.environment", body["environment"])
    if "volumes" in body:
        svc.volumes, svc.tmpfs = service_volumes(r, name, body["volumes"], volumes)
    if "tmpfs" in body:
        svc.tmpfs += service_tmpfs(r, name, body["tmpfs"])
    check_mounts(r, name, svc.volumes, svc.tmpfs)
    if "depends_on" in body:
        svc.depends_on = r.depends_on(f"{key}.depends_on", body["depends_on"])
    if name == MAIN:
        return svc
    for field in ("command", "entrypoint"):
        if field in body:
            setattr(svc, field, r.words(f"{key}.{field}", body[field]))
    for field in ("working_dir", "user", "image"):
        if field in body:
            setattr(svc, field, r.literal(f"{key}.{field}", body[field]))
    if "healthcheck" in body:
        svc.healthcheck = r.healthcheck(f"{key}.healthcheck", body["healthcheck"])
    if "build" in body:
        _build(r, svc, body["build"], env_dir)
    elif svc.image is None:
        r.problem(key, "a service needs an image or a build")
    return svc


def _build(r: _Reader, svc: ComposeService, value: Any, env_dir: Path | None) -> None:
    key = f"services.{svc.name}.build"
    spec = {"context": value} if isinstance(value, str) else value
    if not isinstance(spec, dict):
        r.problem(key, "expected a path or a mapping with context, dockerfile and args")
        return
    for sub in spec:
        if sub not in ("context", "dockerfile", "args"):
            r.problem(f"{key}.{sub}", "not a build key we run (context, dockerfile and args only)")
    if "args" in spec:  # as compose reads them: a mapping or NAME=value; a bare NAME would be the host's
        svc.build_args = r.environment(f"{key}.args", spec["args"])
    context = r.literal(f"{key}.context", spec.get("context", "."))
    dockerfile = r.literal(f"{key}.dockerfile", spec.get("dockerfile", "Dockerfile"))
    if context is None or dockerfile is None:
        return
    for sub, rel in (("context", context), ("dockerfile", dockerfile)):
        path = PurePosixPath(rel)
        if path.is_absolute() or ".." in path.parts or "://" in rel or rel.startswith("~"):
            r.problem(f"{key}.{sub}", f"{rel!r} leaves the task's environment dir: only paths inside it are built")
            return
    svc.build_context, svc.dockerfile = context, dockerfile
    if env_dir is None:
        return
    root = env_dir.resolve()
    ctx = (env_dir / context).resolve()
    if ctx != root and root not in ctx.parents:
        r.problem(f"{key}.context", f"{context!r} resolves outside the task's environment dir (a symbolic link)")
    elif not ctx.is_dir():
        r.problem(f"{key}.context", f"{context!r} is not a directory of the task's environment dir")
    else:
        file = (ctx / dockerfile).resolve()
        if ctx not in file.parents or not file.is_file():
            r.problem(f"{key}.dockerfile", f"{dockerfile!r} is not a file inside the build context")


def _start_order(r: _Reader, services: dict[str, ComposeService], main: ComposeService) -> list[ComposeService]:
    for svc in [main, *services.values()]:
        for dep in svc.depends_on:
            if dep == MAIN:
                r.problem(f"services.{svc.name}.depends_on.{dep}", "main starts last: a service cannot wait for it")
            elif dep not in services:
                r.problem(f"services.{svc.name}.depends_on.{dep}", f"no service {dep!r} in the file")
    order: list[ComposeService] = []
    state: dict[str, int] = {}  # 1: being visited, 2: placed

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2 or name not in services:
            return
        if state.get(name) == 1:
            r.problem(f"services.{name}.depends_on", "a dependency cycle: " + " -> ".join([*path, name]))
            return
        state[name] = 1
        for dep in services[name].depends_on:
            visit(dep, [*path, name])
        state[name] = 2
        order.append(services[name])

    for name in services:
        visit(name, [])
    return order


def parse_compose(text: str, env_dir: Path | None = None) -> tuple[ComposeFile | None, list[ComposeProblem]]:
    """The file as models, or None with the problems that keep it from running here (``env_dir``: check builds)."""
    r = _Reader()
    if len(text.encode()) > MAX_COMPOSE_BYTES:
        return None, [ComposeProblem("(file)", f"larger than {MAX_COMPOSE_BYTES // 1024} KiB")]
    try:
        doc = yaml.load(text, Loader=_Loader)  # a SafeLoader: plain data, never objects
    except yaml.YAMLError as e:
        return None, [ComposeProblem("(file)", f"not valid YAML: {str(e).splitlines()[0]}")]
    if not isinstance(doc, dict) or not isinstance(doc.get("services"), dict):
        return None, [ComposeProblem("services", "the file needs a services mapping")]
    for top in doc:
        if top not in ("services", "volumes") and top not in TOP_LEVEL_IGNORED and not str(top).startswith("x-"):
            r.problem(str(top), REFUSED_KEYS.get(str(top), "not a top-level key we run"))
    declared = declared_volumes(r, doc.get("volumes"))
    main = ComposeService(name=MAIN)
    services: dict[str, ComposeService] = {}
    for name, body in doc["services"].items():
        name = str(name)
        if name != MAIN and not _NAME.fullmatch(name):
            r.problem(f"services.{name}", "a service name must be lowercase letters, digits, '-' or '_'")
            continue
        svc = _service(r, name, body, env_dir, declared)
        if svc is not None and name == MAIN:
            main = svc
        elif svc is not None:
            services[name] = svc
    if len(services) > MAX_SERVICES:
        r.problem("services", f"{len(services)} services besides main: at most {MAX_SERVICES} run here")
    order = _start_order(r, services, main)
    used = sorted({m.source for svc in [main, *order] for m in svc.volumes})
    if len(used) > MAX_VOLUMES:
        r.problem("volumes", f"{len(used)} volumes (anonymous ones included): at most {MAX_VOLUMES} run here")
    if r.problems:
        return None, r.problems
    return ComposeFile(main=main, services=order, volumes=used), []


def read_compose(env_dir: Path) -> tuple[ComposeFile | None, list[ComposeProblem]]:
    """``env_dir/docker-compose.yaml`` (None, [] when there is none)."""
    path = env_dir / "docker-compose.yaml"
    if not path.exists():
        return None, []
    try:
        if path.stat().st_size > MAX_COMPOSE_BYTES:
            return None, [ComposeProblem("(file)", f"larger than {MAX_COMPOSE_BYTES // 1024} KiB")]
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return None, [ComposeProblem("(file)", f"unreadable: {e}")]
    return parse_compose(text, env_dir)
