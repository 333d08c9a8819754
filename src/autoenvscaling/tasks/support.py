"""Harbor features this runner does not run, named, so a task that uses one is refused instead of half-run.

A task whose feature we skipped would still produce a reward, and that reward would be a wrong verdict (a
multi-container task run as one container scores 0: "invalid"; such tasks now run, and a compose key we cannot
honour is refused here by name). So every such feature is listed here, once:
``autoenv tasks lint`` reports each as an ``unsupported-feature`` warning, and validate, solve and calibration
refuse the task as an *error* (``UnsupportedTaskError`` in ``verify/environment.py``), never ``invalid``.

Features only an LLM agent would use (MCP servers, skills) are ignored by the oracle and nop agents, as Harbor's
own oracle ignores them; they are refused only for the other agents (``agent_facing=True``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autoenvscaling.tasks.compose import read_compose
from autoenvscaling.tasks.config import CollectHook, NetworkMode, TaskConfig
from autoenvscaling.tasks.paths import TaskPaths


@dataclass(frozen=True)
class Unsupported:
    """One refused feature: a short id, where the task uses it, and why running without it would be wrong."""

    feature: str
    file: str  # task-relative
    key: str | None  # the dotted task.toml key, when the feature is one
    why: str
    harbor: str | None = None  # Harbor 0.26's lint rule for the same problem, if it has one

    @property
    def message(self) -> str:
        where = self.file if self.key is None else f"{self.file} {self.key}"
        return f"{where}: {self.why}"


def _network(config: TaskConfig) -> list[Unsupported]:
    found: list[Unsupported] = []
    sections: list[tuple[str, Any]] = [
        ("agent", config.agent),
        ("verifier", config.verifier),
        ("environment", config.environment),
    ]
    for name, section in sections:
        if section.network_mode == NetworkMode.ALLOWLIST:
            found.append(
                Unsupported(
                    "network-allowlist",
                    "task.toml",
                    f"{name}.network_mode",
                    '"allowlist" is not supported here (it would mean full internet); use "no-network" or "public"',
                )
            )
    return found


def _compose(paths: TaskPaths, config: TaskConfig) -> list[Unsupported]:
    """Multi-container tasks run (tasks/compose.py); a key of the compose file we cannot honour is refused."""
    if not paths.compose_file.exists():
        return []
    rel = "environment/docker-compose.yaml"
    _, problems = read_compose(paths.environment_dir)
    found = [Unsupported("docker-compose", rel, None, f"{p.key}: {p.why}", p.harbor) for p in problems]
    if not paths.dockerfile.is_file() and not config.environment.docker_image:
        why = "services.main: main needs environment/Dockerfile or [environment].docker_image (not a compose image)"
        found.append(Unsupported("docker-compose", rel, None, why))
    return found


def _environment(paths: TaskPaths, config: TaskConfig) -> list[Unsupported]:
    env = config.environment
    found: list[Unsupported] = []
    found += _compose(paths, config)
    if env.os.lower() != "linux":
        found.append(
            Unsupported("non-linux-os", "task.toml", "environment.os", f"os = {env.os!r}: only linux runs here")
        )
    if (env.gpus or 0) > 0:
        found.append(
            Unsupported("gpus", "task.toml", "environment.gpus", f"gpus = {env.gpus}: sandboxes here get no GPU")
        )
    if env.tpu is not None:
        found.append(Unsupported("tpu", "task.toml", "environment.tpu", "sandboxes here get no TPU"))
    return found


def _verifier(paths: TaskPaths, config: TaskConfig) -> list[Unsupported]:
    ver = config.verifier
    found: list[Unsupported] = []
    if ver.environment is not None:
        found.append(
            Unsupported(
                "verifier-environment",
                "task.toml",
                "verifier.environment",
                "a verifier environment of its own ([verifier.environment]) is not supported; "
                "separate mode here reuses the task image",
            )
        )
    if ver.environment_mode == "separate":
        for name in ("Dockerfile", "docker-compose.yaml"):
            if (paths.tests_dir / name).is_file():
                found.append(
                    Unsupported(
                        "verifier-image",
                        f"tests/{name}",
                        None,
                        "a separate verifier built from tests/ is not supported; separate mode here reuses the "
                        "task image",
                    )
                )
    found += _collect_services("verifier.collect", ver.collect)
    return found


def _collect_services(key: str, hooks: list[CollectHook]) -> list[Unsupported]:
    """Hooks run in the main container only: one for another (compose) service would not run."""
    return [
        Unsupported(
            "verifier-collect-service",
            "task.toml",
            key,
            f"a [[verifier.collect]] hook for service {hook.service!r}: only the main container's hooks run here",
        )
        for hook in hooks
        if hook.service != "main"
    ]


def _artifacts(config: TaskConfig) -> list[Unsupported]:
    entries = [*config.artifacts, *(a for step in config.steps for a in step.artifacts)]
    if all(isinstance(a, str) for a in entries):
        return []
    return [
        Unsupported(
            "artifact-table",
            "task.toml",
            "artifacts",
            "artifacts given as tables ({source, destination, ...}) are not supported; list container paths",
        )
    ]


def _steps(paths: TaskPaths, config: TaskConfig) -> list[Unsupported]:
    """Multi-step tasks run (verify/steps.py), with one network policy for the whole task."""
    found: list[Unsupported] = []
    shared = False
    for i, step in enumerate(config.steps):
        key = f"steps[{i}]"
        explicit = step.verifier is not None and "environment_mode" in step.verifier.model_fields_set
        mode = step.verifier.environment_mode if step.verifier is not None and explicit else None
        shared = shared or (mode or config.verifier.environment_mode) == "shared"
        for name in ("Dockerfile", "docker-compose.yaml"):
            if (mode or config.verifier.environment_mode) == "separate" and (
                paths.steps_dir / step.name / "tests" / name
            ).is_file():
                found.append(
                    Unsupported(
                        "verifier-image",
                        f"steps/{step.name}/tests/{name}",
                        None,
                        "a separate verifier built from tests/ is not supported; separate mode here reuses the "
                        "task image",
                    )
                )
        phases = [("agent", step.agent), ("verifier", step.verifier)]
        if any(p is not None and (p.network_mode is not None or p.allowed_hosts) for _, p in phases):
            found.append(
                Unsupported(
                    "step-network",
                    "task.toml",
                    key,
                    f"step {step.name!r}: a network policy per step is not supported; set it for the whole task",
                )
            )
        if step.verifier is not None and step.verifier.environment is not None:
            found.append(
                Unsupported(
                    "verifier-environment",
                    "task.toml",
                    f"{key}.verifier.environment",
                    f"step {step.name!r}: a verifier environment of its own is not supported",
                )
            )
        if step.verifier is not None:
            found += _collect_services(f"{key}.verifier.collect", step.verifier.collect)
    narrowed = config.verifier_network_mode == NetworkMode.NO_NETWORK != config.agent_network_mode
    if shared and narrowed:
        found.append(
            Unsupported(
                "multi-step-network",
                "task.toml",
                "verifier.network_mode",
                "a multi-step task with a shared-mode verifier that has less network than its agent: the network "
                "cut for one step's tests cannot be given back to the next step's agent (use separate mode)",
            )
        )
    return found


def _agent_facing(config: TaskConfig) -> list[Unsupported]:
    env = config.environment
    found: list[Unsupported] = []
    if env.mcp_servers:
        found.append(
            Unsupported("mcp-servers", "task.toml", "environment.mcp_servers", "our agents are given no MCP servers")
        )
    if env.skills_dir:
        found.append(Unsupported("skills-dir", "task.toml", "environment.skills_dir", "our agents load no skills"))
    return found


def unsupported_features(paths: TaskPaths, config: TaskConfig, *, agent_facing: bool = False) -> list[Unsupported]:
    """Every refused feature the task uses (empty: it runs here). ``agent_facing``: also the agent-only ones."""
    found = [
        *_network(config),
        *_environment(paths, config),
        *_verifier(paths, config),
        *_artifacts(config),
        *_steps(paths, config),
    ]
    return found + _agent_facing(config) if agent_facing else found
