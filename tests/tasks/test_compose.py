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
    ("host volume", "db: {image: i, volumes: ['/var/run/docker.sock:/s']}", "services.db.volumes[0]",
     "compose-external-bind-mount"),
    ("rw volume", "db: {image: i, volumes: ['./data:/data']}", "services.db.volumes[0]",
     "compose-writable-bind-mount"),
    ("ro bind in the task", "db: {image: i, volumes: ['./data:/data:ro']}", "services.db.volumes[0]", None),
    ("long bind", "db: {image: i, volumes: [{type: bind, source: /etc, target: /e, read_only: true}]}",
     "services.db.volumes[0].type", "compose-external-bind-mount"),
    ("home bind", "db: {image: i, volumes: ['~/.ssh:/k']}", "services.db.volumes[0]", "compose-external-bind-mount"),
    ("undeclared volume", "db: {image: i, volumes: ['data:/data']}", "services.db.volumes[0]", None),
    ("relative target", "db: {image: i, volumes: [data]}", "services.db.volumes[0]", None),
    ("target escapes", "db: {image: i, volumes: ['/a/../..']}", "services.db.volumes[0]", None),
    ("mount type", "db: {image: i, volumes: [{type: npipe, target: /p}]}", "services.db.volumes[0].type", None),
    ("main on the reward dir", "main: {volumes: ['/logs/verifier']}", "services.main.volumes[0]", None),
    ("main on the tests", "main: {volumes: [{type: volume, target: /tests}]}", "services.main.volumes[0].target",
     None),
    ("mounted twice", "db: {image: i, volumes: ['/a'], tmpfs: /a}", "services.db.volumes", None),
    ("tmpfs option", "db: {image: i, tmpfs: '/t:noexec'}", "services.db.tmpfs", None),
    ("tmpfs percent", "db: {image: i, tmpfs: ['/t:size=50%']}", "services.db.tmpfs[0]", None),
    ("tmpfs mode", "db: {image: i, tmpfs: ['/t:mode=999']}", "services.db.tmpfs[0]", None),
    ("tmpfs root", "db: {image: i, tmpfs: ['/']}", "services.db.tmpfs[0]", None),
    ("long tmpfs option", "db: {image: i, volumes: [{type: tmpfs, target: /t, tmpfs: {uid: 1}}]}",
     "services.db.volumes[0].tmpfs.uid", None),
    ("env_file escapes", "db: {image: i, env_file: ../secrets.env}", "services.db.env_file", None),
    ("env_file absolute", "db: {image: i, env_file: [/etc/passwd]}", "services.db.env_file[0]", None),
    ("env_file missing", "db: {image: i, env_file: nope.env}", "services.db.env_file", None),
    ("env_file format", "db: {image: i, env_file: [{path: db/Dockerfile, format: raw}]}",
     "services.db.env_file[0].format", None),
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
    ("build arg from host", "db: {build: {context: db, args: [TOKEN]}}", "services.db.build.args.TOKEN", None),
    ("build arg variable", "db: {build: {context: db, args: {A: '${HOME}'}}}", "services.db.build.args.A", None),
    ("build target", "db: {build: {context: db, target: dev}}", "services.db.build.target", None),
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
        ("services: {}\nvolumes: {data: {external: true}}\n", "volumes.data.external"),
        ("services: {}\nvolumes: {data: {driver: nfs}}\n", "volumes.data.driver"),
        (
            "services: {}\nvolumes: {data: {driver_opts: {type: none, o: bind, device: /etc}}}\n",
            "volumes.data.driver_opts",
        ),
        ("services: {}\nvolumes: {data: {name: fixed}}\n", "volumes.data.name"),
        ("services: {}\nvolumes: [data]\n", "volumes"),
        ("services:\n  a:\n    image: i\n    volumes: [" + ", ".join(f"/v{i}" for i in range(17)) + "]\n", "volumes"),
        ("services: {}\nnetworks: {}\n", "networks"),
        ("services:\n" + "".join(f"  s{i}: {{image: i}}\n" for i in range(MAX_SERVICES + 1)), "services"),
        ("services: {}\n" + "#" * 300_000, "(file)"),
    ],
    ids=[
        "not a mapping",
        "not yaml mapping",
        "bad yaml",
        "external volume",
        "volume driver",
        "driver options",
        "volume name",
        "volumes not a mapping",
        "too many volumes",
        "top networks",
        "too many",
        "too big",
    ],
)
def test_file_level_problems(text: str, key: str) -> None:
    assert key in [k for k, _ in _problems(text)]


def test_volumes_tmpfs_and_build_args_as_compose_reads_them(tmp_path: Path) -> None:
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "Dockerfile").write_text("FROM x\n")
    compose, problems = parse_compose(
        """
volumes:
  data: {}
  cache: {driver: local, external: false, labels: {team: a}}
  unused:
services:
  main:
    volumes: [data:/data:ro]
    tmpfs: /scratch
  db:
    build: {context: db, args: [VERSION=1.2, EMPTY=]}
    volumes:
      - data:/var/lib/data:rw,nocopy
      - /anon
      - {type: volume, source: cache, target: /cache, read_only: true, volume: {nocopy: true}}
      - {type: volume, target: /anon2}
      - {type: tmpfs, target: /run/a, tmpfs: {size: 1000, mode: 0700}}
    tmpfs: [/tmp, '/run/b:size=64m,mode=1777']
""",
        tmp_path,
    )
    assert problems == [] and compose is not None
    assert compose.volumes == ["_db_1", "_db_3", "cache", "data"]  # mounted ones only; one per anonymous mount
    assert [(m.source, m.target, m.read_only) for m in compose.main.volumes] == [("data", "/data", True)]
    assert [(t.target, t.size_bytes) for t in compose.main.tmpfs] == [("/scratch", None)]
    (db,) = compose.services
    assert db.build_args == {"VERSION": "1.2", "EMPTY": ""}
    assert [(m.source, m.target, m.read_only, m.no_copy) for m in db.volumes] == [
        ("data", "/var/lib/data", False, True),
        ("_db_1", "/anon", False, False),
        ("cache", "/cache", True, True),
        ("_db_3", "/anon2", False, False),
    ]
    assert [(t.target, t.size_bytes, t.mode) for t in db.tmpfs] == [
        ("/run/a", 1000, 0o700),
        ("/tmp", None, None),
        ("/run/b", 64 << 20, 0o1777),
    ]


ENV_FILE = """\
# comments and blank lines are skipped

export A=plain value   # an inline comment
B = "double \\"quoted\\" \\n line"
C='single $HOME and #hash'
D=costs $$5
E=with#hash
F: yaml style
G="two
lines"
H=
"""


def test_env_file_values_as_compose_reads_them(tmp_path: Path) -> None:
    env = tmp_path / "environment"
    (env / "conf").mkdir(parents=True)
    (env / "conf" / "a.env").write_text(ENV_FILE)
    (env / "b.env").write_text("A=from b\nZ=z\n")
    text = """
services:
  db:
    image: i
    env_file: [conf/a.env, {path: b.env}, {path: missing.env, required: false}]
    environment: {Z: from environment}
"""
    compose, problems = parse_compose(text, env)
    assert problems == [] and compose is not None
    assert compose.services[0].environment == {
        "A": "from b",  # a later file wins
        "B": 'double "quoted" \n line',
        "C": "single $HOME and #hash",  # single quotes: literal
        "D": "costs $5",
        "E": "with#hash",  # a comment needs a space before #
        "F": "yaml style",
        "G": "two\nlines",
        "H": "",
        "Z": "from environment",  # environment over env_file
    }


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("TOKEN\n", "taken from the host"),
        ("A=${HOME}\n", "host variables never reach a task"),
        ('A="$HOME"\n', "host variables never reach a task"),
        ("A='open\n", "unterminated"),
        ("not a line\n", "expected KEY=VALUE"),
        ("A='x' y\n", "after the quoted value"),
    ],
    ids=["bare key", "variable", "quoted variable", "unterminated", "no separator", "trailing text"],
)
def test_env_file_lines_refused(tmp_path: Path, content: str, why: str) -> None:
    (tmp_path / "x.env").write_text("OK=1\n" + content)
    compose, problems = parse_compose("services:\n  db: {image: i, env_file: x.env}\n", tmp_path)
    assert compose is None and [p.key for p in problems] == ["services.db.env_file line 2"]
    assert why in problems[0].why


def test_env_file_stays_inside_the_environment_dir(tmp_path: Path) -> None:
    (tmp_path / "secret.env").write_text("TOKEN=host secret\n")
    env = tmp_path / "environment"
    env.mkdir()
    (env / "link.env").symlink_to(tmp_path / "secret.env")
    (env / "big.env").write_text("A=" + "x" * 70_000 + "\n")
    (env / "dir.env").mkdir()
    text = "services:\n  db: {image: i, env_file: [link.env, big.env, dir.env, ../secret.env, /etc/hostname]}\n"
    compose, problems = parse_compose(text, env)
    assert compose is None
    expected = [
        ("services.db.env_file[0]", "'link.env' resolves outside the task's environment dir"),
        ("services.db.env_file[1]", "'big.env' is larger than 64 KiB"),
        ("services.db.env_file[2]", "'dir.env' is not a file"),
        ("services.db.env_file[3]", "'../secret.env' leaves the task's environment dir"),
        ("services.db.env_file[4]", "'/etc/hostname' leaves the task's environment dir"),
    ]
    assert [(p.key, p.why[: len(why)]) for p, (_, why) in zip(problems, expected, strict=True)] == expected
    assert all("host secret" not in p.why for p in problems)


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
