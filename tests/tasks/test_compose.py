"""environment/docker-compose.yaml read as untrusted input: what runs, and every refusal naming its key (no Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.tasks import load_task
from autoenvscaling.tasks.compose import MAX_SERVICES, Condition, parse_compose, read_compose
from autoenvscaling.tasks.support import unsupported_features
from task_factory import MakeTask

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "harbor-kinds" / "compose-service" / "environment"


def _ok(text: str) -> list[tuple[str, dict[str, Condition]]]:
    compose, problems = parse_compose(text)
    assert problems == [] and compose is not None
    return [(s.name, s.depends_on) for s in compose.services]


def _problems(text: str, env_dir: Path | None = None) -> list[tuple[str, str | None]]:
    compose, problems = parse_compose(text, env_dir)
    assert compose is None and problems
    return [(p.key, p.harbor) for p in problems]


def test_the_example_parses() -> None:
    compose, problems = read_compose(EXAMPLE)
    assert problems == [] and compose is not None
    assert compose.main.depends_on == {"inventory": Condition.HEALTHY}
    (svc,) = compose.services
    assert (svc.name, svc.build_context, svc.dockerfile) == ("inventory", "./inventory", "Dockerfile")
    assert svc.command == ["python3", "/opt/inventory/server.py"] and svc.environment == {"PAGE_SIZE": "4"}
    assert svc.healthcheck is not None and svc.healthcheck.test[0] == "CMD"
    assert (svc.healthcheck.interval_sec, svc.healthcheck.timeout_sec, svc.healthcheck.retries) == (1.0, 5.0, 30)


def test_start_order_follows_depends_on_in_both_forms() -> None:
    order = _ok(
        """
services:
  main: {depends_on: [web]}
  web:
    image: img
    depends_on:
      db: {condition: service_healthy}
      migrate: {condition: service_completed_successfully, required: true}
  migrate: {image: img, depends_on: [db]}
  db: {image: img}
"""
    )
    assert order == [
        ("db", {}),
        ("migrate", {"db": Condition.STARTED}),
        ("web", {"db": Condition.HEALTHY, "migrate": Condition.COMPLETED}),
    ]


def test_values_as_compose_passes_them() -> None:
    compose, problems = parse_compose(
        """
version: "3.8"
x-common: &common {image: img}
services:
  main:
    environment: {DEBUG: true, RETRIES: 3}
  api:
    <<: *common
    command: python3 -m http.server "80 00"
    entrypoint: [/bin/sh, -c]
    environment: [PRICE=$$5, EMPTY=]
    healthcheck: {test: curl -sf http://127.0.0.1/ || exit 1, interval: 1m30s, start_period: 500ms}
  off:
    image: img
    healthcheck: {disable: true}
    platform: linux/amd64
    restart: "no"
    expose: ["80"]
    init: true
"""
    )
    assert problems == [] and compose is not None
    assert compose.main.environment == {"DEBUG": "true", "RETRIES": "3"}
    api, off = compose.services
    assert api.image == "img" and api.command == ["python3", "-m", "http.server", "80 00"]
    assert api.entrypoint == ["/bin/sh", "-c"] and api.environment == {"PRICE": "$5", "EMPTY": ""}
    assert api.healthcheck is not None
    assert api.healthcheck.test == ["CMD-SHELL", "curl -sf http://127.0.0.1/ || exit 1"]
    assert (api.healthcheck.interval_sec, api.healthcheck.start_period_sec) == (90.0, 0.5)
    assert off.healthcheck is not None and off.healthcheck.test == ["NONE"]


BUILD_DIR = {"db/Dockerfile": "FROM x\n", "Dockerfile": "FROM y\n"}
REFUSED: list[tuple[str, str, str, str | None]] = [
    # (case id, a service body or a whole file, the key named, Harbor's rule)
    ("privileged", "db: {image: i, privileged: true}", "services.db.privileged", "compose-privileged"),
    ("cap_add", "db: {image: i, cap_add: [NET_ADMIN]}", "services.db.cap_add", "compose-additional-capabilities"),
    ("host volume", "db: {image: i, volumes: ['/var/run/docker.sock:/s']}", "services.db.volumes",
     "compose-external-bind-mount"),
    ("rw volume", "db: {image: i, volumes: ['./data:/data']}", "services.db.volumes", "compose-writable-bind-mount"),
    ("named volume", "db: {image: i, volumes: ['data:/data']}", "services.db.volumes", None),
    ("host network", "db: {image: i, network_mode: host}", "services.db.network_mode", None),
    ("ports", "db: {image: i, ports: ['5432:5432']}", "services.db.ports", None),
    ("devices", "db: {image: i, devices: ['/dev/kvm']}", "services.db.devices", None),
    ("pid", "db: {image: i, pid: host}", "services.db.pid", None),
    ("unknown key", "db: {image: i, stdin_open: true}", "services.db.stdin_open", None),
    ("restart", "db: {image: i, restart: always}", "services.db.restart", None),
    ("platform", "db: {image: i, platform: windows/amd64}", "services.db.platform", None),
    ("main command", "main: {command: [sh]}", "services.main.command", None),
    ("main image", "main: {image: other}", "services.main.image", None),
    ("main healthcheck", "main: {healthcheck: {test: [CMD, 'true']}}", "services.main.healthcheck", None),
    ("main privileged", "main: {privileged: true}", "services.main.privileged", "compose-privileged"),
    ("no image", "db: {command: [x]}", "services.db", None),
    ("context escapes", "db: {build: ../../elsewhere}", "services.db.build.context", None),
    ("absolute context", "db: {build: {context: /etc}}", "services.db.build.context", None),
    ("remote context", "db: {build: 'https://github.com/x/y.git'}", "services.db.build.context", None),
    ("dockerfile escapes", "db: {build: {context: db, dockerfile: ../Dockerfile}}", "services.db.build.dockerfile",
     None),
    ("build args", "db: {build: {context: db, args: {A: 1}}}", "services.db.build.args", None),
    ("host variable", "db: {image: '${IMAGE}'}", "services.db.image", None),
    ("bare variable", "db: {image: i, command: echo $HOME}", "services.db.command", None),
    ("env from host (map)", "db: {image: i, environment: {TOKEN: null}}", "services.db.environment.TOKEN", None),
    ("env from host (list)", "db: {image: i, environment: [TOKEN]}", "services.db.environment.TOKEN", None),
    ("unknown dependency", "db: {image: i, depends_on: [cache]}", "services.db.depends_on.cache", None),
    ("depends on main", "db: {image: i, depends_on: [main]}", "services.db.depends_on.main", None),
    ("condition", "db: {image: i}\n  w: {image: i, depends_on: {db: {condition: ready}}}",
     "services.w.depends_on.db.condition", None),
    ("cycle", "a: {image: i, depends_on: [b]}\n  b: {image: i, depends_on: [a]}", "services.a.depends_on", None),
    ("name", "Web_1: {image: i}", "services.Web_1", None),
    ("healthcheck key", "db: {image: i, healthcheck: {test: [CMD, 'true'], bogus: 1}}", "services.db.healthcheck.bogus",
     None),
    ("healthcheck test", "db: {image: i, healthcheck: {test: [true]}}", "services.db.healthcheck.test", None),
    ("duration", "db: {image: i, healthcheck: {test: [CMD, 'true'], interval: soon}}",
     "services.db.healthcheck.interval", None),
    ("retries", "db: {image: i, healthcheck: {test: [CMD, 'true'], retries: 0}}", "services.db.healthcheck.retries",
     None),
]  # fmt: skip


@pytest.mark.parametrize(("body", "key", "harbor"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused_keys_are_named(tmp_path: Path, body: str, key: str, harbor: str | None) -> None:
    for rel, text in BUILD_DIR.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    problems = _problems(f"services:\n  {body}\n", tmp_path)
    assert (key, harbor) in problems, problems


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("services: [main]\n", "services"),
        ("just text\n", "services"),
        ("services: {main: {}\n", "(file)"),
        ("services: {}\nvolumes: {data: {}}\n", "volumes"),
        ("services: {}\nnetworks: {}\n", "networks"),
        ("services:\n" + "".join(f"  s{i}: {{image: i}}\n" for i in range(MAX_SERVICES + 1)), "services"),
        ("services: {}\n" + "#" * 300_000, "(file)"),
    ],
    ids=["not a mapping", "not yaml mapping", "bad yaml", "top volumes", "top networks", "too many", "too big"],
)
def test_file_level_problems(text: str, key: str) -> None:
    assert key in [k for k, _ in _problems(text)]


def test_build_context_is_checked_on_disk(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    env = tmp_path / "environment"
    env.mkdir()
    (env / "link").symlink_to(tmp_path / "outside")
    (env / "empty").mkdir()
    text = "services:\n  a: {build: link}\n  b: {build: missing}\n  c: {build: empty}\n"
    assert _problems(text, env) == [
        ("services.a.build.context", None),
        ("services.b.build.context", None),
        ("services.c.build.dockerfile", None),
    ]


def test_support_runs_a_compose_task_and_refuses_one_without_a_main_image(make_task: MakeTask) -> None:
    compose = "services:\n  main: {depends_on: [db]}\n  db: {image: autoenv/base:bookworm}\n"
    task = load_task(make_task(files={"environment/docker-compose.yaml": compose}))
    assert unsupported_features(task.paths, task.config, agent_facing=True) == []
    task = load_task(
        make_task("nomain", files={"environment/docker-compose.yaml": compose, "environment/Dockerfile": None})
    )
    (found,) = unsupported_features(task.paths, task.config)
    assert found.feature == "docker-compose" and found.why.startswith(
        "services.main: main needs environment/Dockerfile"
    )
