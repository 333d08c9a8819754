"""Harbor features we do not run are named: a lint warning here, an UnsupportedTaskError (an error) at run time."""

from __future__ import annotations

import re

import pytest

from autoenvscaling.tasks import load_task
from autoenvscaling.tasks.lint import lint_task
from autoenvscaling.tasks.support import unsupported_features
from autoenvscaling.verify.environment import UnsupportedTaskError, check_supported
from task_factory import TASK_TOML, MakeTask

# Multi-container tasks run (tests/tasks/test_compose.py); a key we cannot honour is refused by name.
COMPOSE = """\
services:
  main:
    depends_on:
      db:
        condition: service_healthy
  db:
    image: autoenv/base:bookworm
    privileged: true
"""

# (case id, files to add or replace, the feature id it must be refused as)
CASES: list[tuple[str, dict[str, str | None], str]] = [
    ("compose", {"environment/docker-compose.yaml": COMPOSE}, "docker-compose"),
    ("os", {"task.toml": TASK_TOML.replace("cpus = 1", 'cpus = 1\nos = "windows"')}, "non-linux-os"),
    ("gpus", {"task.toml": TASK_TOML.replace("cpus = 1", "cpus = 1\ngpus = 1")}, "gpus"),
    ("tpu", {"task.toml": TASK_TOML + '\n[environment.tpu]\ntype = "v5e"\n'}, "tpu"),
    (
        "verifier-environment",
        {"task.toml": TASK_TOML + '\n[verifier.environment]\ndocker_image = "autoenv/python:latest"\n'},
        "verifier-environment",
    ),
    (
        "verifier-image",
        {
            "task.toml": TASK_TOML.replace("timeout_sec = 120", 'timeout_sec = 120\nenvironment_mode = "separate"'),
            "tests/Dockerfile": "FROM autoenv/python:latest\n",
        },
        "verifier-image",
    ),
    (
        "collect-service",
        {"task.toml": TASK_TOML + '\n[[verifier.collect]]\ncommand = "pg_dump > /x.sql"\nservice = "db"\n'},
        "verifier-collect-service",
    ),
    (
        "artifact-table",
        {"task.toml": 'artifacts = [{ source = "/app", destination = "app" }]\n' + TASK_TOML},
        "artifact-table",
    ),
    (
        "step-verifier-image",
        {
            "task.toml": TASK_TOML.replace("timeout_sec = 120", 'timeout_sec = 120\nenvironment_mode = "separate"')
            + '\n[[steps]]\nname = "one"\n',
            "steps/one/tests/Dockerfile": "FROM autoenv/python:latest\n",
        },
        "verifier-image",
    ),
    (
        "step-network",
        {"task.toml": TASK_TOML + '\n[[steps]]\nname = "one"\n[steps.agent]\nnetwork_mode = "no-network"\n'},
        "step-network",
    ),
    (
        "multi-step-network",
        {
            "task.toml": TASK_TOML.replace("timeout_sec = 120", 'timeout_sec = 120\nnetwork_mode = "no-network"')
            + '\n[[steps]]\nname = "one"\n',
        },
        "multi-step-network",
    ),
    (
        "allowlist",
        {"task.toml": TASK_TOML.replace("cpus = 1", 'cpus = 1\nnetwork_mode = "allowlist"')},
        "network-allowlist",
    ),
]


@pytest.mark.parametrize(("files", "feature"), [(f, x) for _, f, x in CASES], ids=[c[0] for c in CASES])
def test_unsupported_feature_is_named_everywhere(
    make_task: MakeTask, files: dict[str, str | None], feature: str
) -> None:
    root = make_task(files=files)
    task = load_task(root)  # Harbor accepts the task: it must load, not be "task-toml-invalid"
    assert [u.feature for u in unsupported_features(task.paths, task.config)] == [feature]

    warned = [f for f in lint_task(root) if f.rule == "unsupported-feature"]
    assert len(warned) == 1 and warned[0].severity == "warning"
    assert warned[0].message.startswith(f"{feature}: ")

    with pytest.raises(UnsupportedTaskError) as err:
        check_supported(task)
    assert "\n" not in str(err.value)
    assert str(err.value).startswith(f"{root.name}: ")


def test_compose_key_is_refused_by_name_even_with_a_dockerfile(make_task: MakeTask) -> None:
    # Issue 14: with a Dockerfile next to it, a compose file used to be ignored; now the file runs, or the key that
    # keeps it from running is named (never a run without it).
    task = load_task(make_task(files={"environment/docker-compose.yaml": COMPOSE}))
    assert task.paths.dockerfile.is_file()
    with pytest.raises(UnsupportedTaskError, match=r"docker-compose\.yaml: services\.db\.privileged: privileged"):
        check_supported(task)
    (finding,) = [f for f in lint_task(task.paths.root) if f.rule == "unsupported-feature"]
    assert finding.harbor == "compose-privileged"  # Harbor 0.26's rule for the same key


RUNNABLE_COMPOSE = """\
volumes:
  data: {}
services:
  main:
    volumes: [data:/data]
    tmpfs: /scratch:size=16m
    env_file: main.env
  db:
    build: {context: db, args: {VERSION: "1"}}
    volumes: [data:/var/lib/db]
    tmpfs: [/run]
"""


@pytest.mark.parametrize(
    ("compose", "message", "harbor"),
    [
        (RUNNABLE_COMPOSE, None, None),
        (
            RUNNABLE_COMPOSE.replace("data:/var/lib/db", "/var/run/docker.sock:/var/lib/db"),
            "services.db.volumes[0]: '/var/run/docker.sock' is a host path: sandboxes get no bind mounts",
            "compose-external-bind-mount",
        ),
        (
            RUNNABLE_COMPOSE.replace("data: {}", "data: {external: true}"),
            "volumes.data.external: an external volume lives outside the trial",
            None,
        ),
        (
            RUNNABLE_COMPOSE.replace("env_file: main.env", "env_file: ../tests/test.sh"),
            "services.main.env_file: '../tests/test.sh' leaves the task's environment dir",
            None,
        ),
    ],
    ids=["runs", "bind mount", "external volume", "env_file escapes"],
)
def test_volumes_tmpfs_env_files_run_and_host_paths_are_refused(
    make_task: MakeTask, compose: str, message: str | None, harbor: str | None
) -> None:
    files = {
        "environment/docker-compose.yaml": compose,
        "environment/main.env": "GREETING=hi\n",
        "environment/db/Dockerfile": "FROM autoenv/base:bookworm\nARG VERSION\n",
    }
    task = load_task(make_task(files=files))
    findings = [f for f in lint_task(task.paths.root) if f.rule == "unsupported-feature"]
    if message is None:
        check_supported(task)
        assert findings == []
        return
    (finding,) = findings
    assert finding.severity == "warning" and finding.harbor == harbor
    assert finding.message.startswith(f"docker-compose: {message}"), finding.message
    with pytest.raises(UnsupportedTaskError, match=re.escape(f"environment/docker-compose.yaml: {message}")):
        check_supported(task)


def test_agent_facing_features_only_for_agents(make_task: MakeTask) -> None:
    toml = TASK_TOML + '\n[[environment.mcp_servers]]\nname = "docs"\nurl = "http://docs:8000/sse"\n'
    task = load_task(make_task(files={"task.toml": toml}))
    check_supported(task)  # the oracle and nop never use MCP servers
    with pytest.raises(UnsupportedTaskError, match="MCP servers"):
        check_supported(task, agent_facing=True)
    assert [f.message.split(":")[0] for f in lint_task(task.paths.root) if f.rule == "unsupported-feature"] == [
        "mcp-servers"
    ]


def test_several_features_are_counted(make_task: MakeTask) -> None:
    toml = TASK_TOML.replace("cpus = 1", "cpus = 1\ngpus = 2")
    task = load_task(make_task(files={"task.toml": toml, "environment/docker-compose.yaml": COMPOSE}))
    with pytest.raises(UnsupportedTaskError, match=r"\(and 1 more unsupported feature\(s\)\)"):
        check_supported(task)


def test_hooks_and_healthchecks_are_supported(make_task: MakeTask) -> None:
    toml = (
        TASK_TOML
        + '\n[environment.healthcheck]\ncommand = "test -f /app/ready"\nretries = 2\n'
        + '\n[[verifier.collect]]\ncommand = "cp /app/x /logs/artifacts/"\n'
        + '\n[[steps]]\nname = "one"\n[steps.healthcheck]\ncommand = "true"\n'
        + '[[steps.verifier.collect]]\ncommand = "true"\n'
    )
    task = load_task(make_task(files={"task.toml": toml}))
    assert unsupported_features(task.paths, task.config, agent_facing=True) == []
    assert task.config.environment.healthcheck is not None and task.config.environment.healthcheck.retries == 2


def test_clean_task_is_supported(make_task: MakeTask) -> None:
    task = load_task(make_task())
    assert unsupported_features(task.paths, task.config, agent_facing=True) == []
    check_supported(task, agent_facing=True)
