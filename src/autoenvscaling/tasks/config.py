"""Pydantic models of Harbor's ``task.toml`` (schema 1.4; the older ``version = "1.1"`` spelling is accepted).

Every section is optional. Unknown keys are kept (``extra="allow"``) so a round trip never loses
data; ``autoenv tasks lint`` reports them as findings instead of failing at run time.
"""

from __future__ import annotations

import enum
import re
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

SCHEMA_VERSION = "1.4"
ACCEPTED_SCHEMA_VERSIONS = ("1.0", "1.1", "1.2", "1.3", "1.4")


# Every time limit is finite and positive: a task may not switch its own limits off (nan, inf, 0 and negatives
# are refused at load time, naming the field).
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
DEFAULT_AGENT_TIMEOUT_SEC = 600.0  # Harbor's default when [agent].timeout_sec is absent


def artifact_path_problem(path: object) -> str | None:
    """Why ``path`` is not an acceptable ``artifacts`` entry, or None.

    An artifact names a file in the container; its copy lands under the trial's ``artifacts/`` dir on the
    host, so it must be an absolute, normalized path with no ``..`` (which would climb out of that dir)."""
    if not isinstance(path, str) or not path.strip():
        return "must be a non-empty string"
    if "\0" in path or "\\" in path:
        return f"{path!r} holds a NUL byte or a backslash"
    p = PurePosixPath(path)
    if not p.is_absolute():
        return f"{path!r} is not an absolute container path (e.g. /app/out.txt)"
    if ".." in p.parts:
        return f"{path!r} contains '..': artifacts may not climb out of the trial's artifacts dir"
    if p == PurePosixPath("/"):
        return "'/' cannot be an artifact (name the files or dirs to keep)"
    return None


def _check_artifact(path: str) -> str:
    problem = artifact_path_problem(path)
    if problem is not None:
        raise ValueError(problem)
    return path


ArtifactPath = Annotated[str, AfterValidator(_check_artifact)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def unknown_keys(self) -> list[str]:
        return sorted((self.model_extra or {}).keys())


class ArtifactTable(_Section):
    """Harbor's table form of an artifact entry (``{source = "/app", destination = "out"}``)."""

    source: str


class NetworkMode(enum.StrEnum):
    PUBLIC = "public"
    NO_NETWORK = "no-network"
    ALLOWLIST = "allowlist"


class TaskInfo(_Section):
    name: str | None = None
    version: str | None = None
    description: str | None = None
    keywords: list[str] = Field(default_factory=list)
    authors: list[Any] = Field(default_factory=list)


class HealthcheckConfig(_Section):
    """Harbor's readiness check (Docker HEALTHCHECK semantics): run until it exits 0 before the agent starts."""

    command: str
    interval_sec: float = Field(default=5.0, ge=0, allow_inf_nan=False)
    timeout_sec: Seconds = 30.0
    start_period_sec: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    start_interval_sec: float = Field(default=5.0, ge=0, allow_inf_nan=False)
    retries: int = Field(default=3, ge=0)


class CollectHook(_Section):
    """A ``[[verifier.collect]]`` command, run after the agent phase and before the artifacts are copied out."""

    command: str
    service: str = "main"
    timeout_sec: Seconds = 60.0
    user: str | int | None = None


class VerifierConfig(_Section):
    timeout_sec: Seconds = 600.0
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None  # Harbor accepts a user name or a numeric uid
    # "separate": the tests run in a fresh container of the same image holding only the declared artifacts
    # (nothing the agent left running can touch the reward); "shared": in the agent's container.
    environment_mode: Literal["shared", "separate"] = "shared"
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] = Field(default_factory=list)
    # Harbor 0.26's own verifier environment: read so that a task using it is refused by name (tasks/support.py).
    environment: dict[str, Any] | None = None
    collect: list[CollectHook] = Field(default_factory=list)


class TaskAgentConfig(_Section):
    """task.toml's ``[agent]`` table (Harbor calls it AgentConfig; ``agent.loop.AgentConfig`` is the loop's own)."""

    timeout_sec: Seconds = DEFAULT_AGENT_TIMEOUT_SEC
    user: str | int | None = None
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] = Field(default_factory=list)


class EnvironmentConfig(_Section):
    build_timeout_sec: Seconds = 600.0
    docker_image: str | None = None
    cpus: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    memory_mb: int | None = Field(default=None, gt=0)
    storage_mb: int | None = Field(default=None, gt=0)
    gpus: int | None = None
    gpu_types: list[str] | None = None
    os: str = "linux"
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] = Field(default_factory=list)
    workdir: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    healthcheck: HealthcheckConfig | None = None
    tpu: Any | None = None
    # Harbor fields this project does not act on; declared so real tasks lint clean and round-trip.
    mcp_servers: list[Any] = Field(default_factory=list)
    skills_dir: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _legacy_spellings(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        # Older tasks say ``allow_internet = true|false``; map it onto network_mode.
        if "allow_internet" in data:
            allow = data.pop("allow_internet")
            if data.get("network_mode") is None:
                data["network_mode"] = "public" if allow else "no-network"
        # Harbor's deprecated ``memory = "2G"`` / ``storage = "10G"`` sizes.
        for old, new in (("memory", "memory_mb"), ("storage", "storage_mb")):
            if old in data:
                size = data.pop(old)
                if data.get(new) is None:
                    data[new] = _size_to_mb(size, old)
        return data


def _size_to_mb(size: Any, field: str) -> int:
    text = str(size).strip().upper().removesuffix("B").strip()
    factors = {"G": 1024.0, "M": 1.0, "K": 1 / 1024}
    try:
        if text and text[-1] in factors:
            return int(float(text[:-1]) * factors[text[-1]])
        return int(float(text))
    except ValueError:
        raise ValueError(f"{field}: cannot read size {size!r} (expected e.g. '2G' or '512M')") from None


class SolutionConfig(_Section):
    env: dict[str, str] = Field(default_factory=dict)


def _check_step_name(name: str) -> str:
    # The name is a directory under steps/ (and under the trial dir): one portable path component, as Harbor asks.
    if (
        not name.strip()
        or name in (".", "..")
        or name.endswith((".", " "))
        or re.search(r'[<>:"/\\|?*\x00-\x1f\x7f]', name)
    ):
        raise ValueError(f"{name!r} is not a usable step name (one directory name: no slashes, no '..')")
    return name


class StepConfig(_Section):
    """One ``[[steps]]`` entry; its files live in ``steps/<name>/``."""

    name: Annotated[str, AfterValidator(_check_step_name)]
    min_reward: float | dict[str, float] | None = None
    contributes_to_mean: bool | None = None
    agent: TaskAgentConfig | None = None
    verifier: VerifierConfig | None = None
    healthcheck: HealthcheckConfig | None = None  # after the step's setup, before its agent (and the task's)
    artifacts: list[ArtifactPath | ArtifactTable] = Field(default_factory=list)


class TaskConfig(_Section):
    schema_version: str = SCHEMA_VERSION
    # Harbor also accepts tables ({source, destination, ...}); they are read, and refused (tasks/support.py).
    artifacts: list[ArtifactPath | ArtifactTable] = Field(default_factory=list)
    task: TaskInfo = Field(default_factory=TaskInfo)
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: TaskAgentConfig = Field(default_factory=TaskAgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    solution: SolutionConfig = Field(default_factory=SolutionConfig)
    steps: list[StepConfig] = Field(default_factory=list)
    multi_step_reward_strategy: Literal["mean", "final"] | None = None
    source: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _legacy_version(cls, data: Any) -> Any:
        # Older tasks say ``version = "1.1"`` at the top level; Harbor drops it when both are given.
        if isinstance(data, dict) and "version" in data:
            data = dict(data)
            version = data.pop("version")
            data.setdefault("schema_version", str(version))
        return data

    @model_validator(mode="after")
    def _unique_step_names(self) -> TaskConfig:
        seen: set[str] = set()
        for step in self.steps:
            if step.name.casefold() in seen:
                raise ValueError(f"step name {step.name!r} is used twice (names are directories: case does not count)")
            seen.add(step.name.casefold())
        return self

    @property
    def artifact_paths(self) -> list[str]:
        """The artifacts given as container paths (tables are refused before any trial runs)."""
        return [a for a in self.artifacts if isinstance(a, str)]

    @property
    def is_multi_step(self) -> bool:
        return bool(self.steps)

    @property
    def agent_network_mode(self) -> NetworkMode:
        """The agent phase's network policy (Harbor's default is public)."""
        return self.agent.network_mode or self.environment.network_mode or NetworkMode.PUBLIC

    @property
    def verifier_network_mode(self) -> NetworkMode:
        """The verifier phase's network policy: its own, else the environment's, else public."""
        return self.verifier.network_mode or self.environment.network_mode or NetworkMode.PUBLIC

    @property
    def network_enabled(self) -> bool:
        """Whether the agent container may reach the network."""
        return self.agent_network_mode != NetworkMode.NO_NETWORK

    def unknown_key_paths(self) -> list[str]:
        """Dotted paths of keys that are not part of the schema (lint findings, never run-time errors)."""
        found = self.unknown_keys()
        sections: dict[str, _Section] = {
            "task": self.task,
            "verifier": self.verifier,
            "agent": self.agent,
            "environment": self.environment,
            "solution": self.solution,
        }
        if self.environment.healthcheck is not None:
            sections["environment.healthcheck"] = self.environment.healthcheck
        for name, section in sections.items():
            found += [f"{name}.{k}" for k in section.unknown_keys()]
        for i, hook in enumerate(self.verifier.collect):
            found += [f"verifier.collect[{i}].{k}" for k in hook.unknown_keys()]
        for i, step in enumerate(self.steps):
            found += [f"steps[{i}].{k}" for k in step.unknown_keys()]
            for name, sub in (("agent", step.agent), ("verifier", step.verifier)):
                if sub is not None:
                    found += [f"steps[{i}].{name}.{k}" for k in sub.unknown_keys()]
        return found
