"""Which docker-compose keys run here, and why each other one is refused (tasks/compose.py reads the file).

Refusing is the rule for anything we would otherwise drop: a task run without its host mount, capability or port
would still yield a reward, and a wrong one. Volumes of the trial's own, tmpfs mounts and env files run; their
rules are in tasks/compose_mounts.py and tasks/compose_envfile.py. Where Harbor 0.26's ``harbor lint`` has a rule
for the same key, its id is given, so ``autoenv tasks lint`` can name it next to ours.
"""

from __future__ import annotations

import platform
from typing import Any

# Keys of a service other than main that are honoured (platform, restart and init only with harmless values;
# volumes, tmpfs and env_file as tasks/compose_mounts.py and tasks/compose_envfile.py read them).
SERVICE_KEYS = frozenset(
    {
        "image", "build", "environment", "command", "entrypoint", "working_dir", "user", "healthcheck",
        "depends_on", "expose", "platform", "restart", "init", "volumes", "tmpfs", "env_file",
    }
)  # fmt: skip
MAIN_KEYS = frozenset({"environment", "depends_on", "platform", "expose", "init", "volumes", "tmpfs", "env_file"})
TOP_LEVEL_IGNORED = frozenset({"version", "name"})  # obsolete / the project name: we name our containers

REFUSED_KEYS: dict[str, str] = {
    "network_mode": "the network is the task's own (task.toml network_mode); other network modes are refused",
    "networks": "services share one network per trial here; custom networks are not supported",
    "ports": "ports published on the host are refused; services reach each other by name on the task's network",
    "devices": "host devices are never passed to a sandbox",
    "pid": "sharing a PID namespace is refused",
    "ipc": "sharing an IPC namespace is refused",
    "userns_mode": "user namespace modes are refused",
    "cgroup": "cgroup namespace modes are refused",
    "cgroup_parent": "cgroup placement is refused",
    "security_opt": "security options are fixed here (no-new-privileges, a minimal capability set)",
    "cap_drop": "the capability set is fixed here; a changed set would not be honoured exactly",
    "sysctls": "kernel parameters are not set for sandboxes",
    "volumes_from": "sharing another container's volumes is not supported",
    "secrets": "compose secrets are not supported",
    "configs": "compose configs are not supported",
    "extra_hosts": "extra host entries are not supported",
    "dns": "custom DNS servers are not supported",
    "links": "links are not supported (services reach each other by name anyway)",
    "external_links": "links to outside containers are refused",
    "container_name": "container names are chosen by the harness (one set per trial)",
    "extends": "extends is not supported; write the service out",
    "include": "include is not supported; write the services out in one file",
    "profiles": "profiles are not supported",
    "runtime": "container runtimes are not chosen by tasks",
    "gpus": "sandboxes here get no GPU",
    "deploy": "deploy settings are not run; the task's [environment] limits apply to every service",
    "mem_limit": "per-service limits are not run; the task's [environment] limits apply to every service",
    "cpus": "per-service limits are not run; the task's [environment] limits apply to every service",
    "ulimits": "per-service ulimits are not run",
    "shm_size": "per-service shared memory sizes are not run",
    "read_only": "a read-only root filesystem is not supported",
    "stop_signal": "stop signals are not run (containers are removed at teardown)",
    "logging": "logging drivers are not chosen by tasks",
}
_MAIN_OWNED = {
    "image": "main is the task's own container: its image comes from environment/Dockerfile or "
    "[environment].docker_image",
    "build": "main is built from environment/Dockerfile; a build of its own in the compose file is not supported",
    "command": "main runs the harness's keep-alive command; start processes from the Dockerfile's ENTRYPOINT",
    "entrypoint": "main's ENTRYPOINT comes from its Dockerfile",
    "healthcheck": "main's healthcheck is [environment.healthcheck] in task.toml",
    "working_dir": "main's working dir is [environment].workdir or the Dockerfile's WORKDIR",
    "user": "main's users are [agent].user / [verifier].user in task.toml",
}
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def refusal(service: str, key: str, value: Any) -> tuple[str | None, str | None]:
    """Why ``services.<service>.<key>: value`` cannot run here (None: it can), and Harbor's rule for it."""
    if key == "privileged":
        return ("privileged containers are never run", "compose-privileged") if value else (None, None)
    if key == "cap_add":
        return (
            "extra capabilities are never granted (sandboxes keep a fixed minimal set)",
            "compose-additional-capabilities",
        )
    if key == "platform":
        host = _ARCH.get(platform.machine().lower(), platform.machine().lower())
        os_name, _, arch = str(value).partition("/")
        if os_name == "linux" and _ARCH.get(arch, arch) == host:
            return None, None
        return f"platform {value!r}: only linux/{host} runs on this host", None
    if key == "restart":
        return (None, None) if value in ("no", False) else ("restart policies are not run", None)
    if key == "init":
        return (None, None) if isinstance(value, bool) else ("expected true or false", None)
    if key == "expose":
        return None, None  # on the trial's network every port of a service is reachable by name
    if service == "main" and key in _MAIN_OWNED:
        return _MAIN_OWNED[key], None
    return REFUSED_KEYS.get(key, "not a compose key we run"), None
