"""A multi-container task's sandbox spec: service images built from environment/ (aliases applied, build args passed)
or found locally, main's depends_on and environment, volumes, tmpfs and env files, and the trial's error where a
backend cannot run services or mounts (no Docker)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autoenvscaling.sandbox.base import BuildSpec, SandboxError
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.tasks import load_task
from autoenvscaling.verify.environment import TASK_IMAGE_REPO, EnvironmentBuilder
from autoenvscaling.verify.trial import TrialRunner
from autoenvscaling.verify.trial_agents import OracleAgent

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "harbor-kinds" / "compose-service"


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    root = tmp_path / "compose-service"
    shutil.copytree(EXAMPLE, root)
    return root


class _Recording(FakeBackend):
    """Keeps what each build context held (the harness deletes the context once the build returns)."""

    def __init__(self) -> None:
        super().__init__()
        self.contexts: list[dict[str, str]] = []

    def build(self, spec: BuildSpec) -> str:
        files = sorted(p for p in spec.context_dir.rglob("*") if p.is_file())
        self.contexts.append({p.relative_to(spec.context_dir).as_posix(): p.read_text() for p in files})
        return super().build(spec)


def test_spec_carries_the_services(task_dir: Path) -> None:
    (task_dir / "environment" / "inventory" / "Dockerfile").write_text("FROM python:3.12-slim\nCOPY server.py /s.py\n")
    backend = _Recording()
    builder = EnvironmentBuilder(backend, aliases={"python:3.12-slim": "autoenv/terminal:latest"})
    task = load_task(task_dir)
    image = builder.image_for(task)  # builds main and the service
    main_build, service_build = backend.builds
    assert main_build.tag == image and service_build.tag.startswith(f"{TASK_IMAGE_REPO}/compose-service-inventory:")
    # The service's own context (not environment/), its FROM rewritten by the alias.
    assert sorted(backend.contexts[1]) == ["Dockerfile", "server.py"]
    assert backend.contexts[1]["Dockerfile"].startswith("FROM autoenv/terminal:latest\n")

    spec = builder.spec_for(task, image, name_hint="t", run_id="r1", network=False)
    assert spec.depends_on == {"inventory": "service_healthy"} and not spec.network
    (svc,) = spec.services
    assert svc.image == service_build.tag and len(backend.builds) == 2  # built once
    assert (svc.name, svc.command, svc.env) == (
        "inventory",
        ["python3", "/opt/inventory/server.py"],
        {"PAGE_SIZE": "4"},
    )
    assert svc.healthcheck is not None and svc.healthcheck.retries == 30 and svc.healthcheck.interval_sec == 1.0
    assert svc.depends_on == {}


def test_main_environment_merges_under_task_toml(task_dir: Path) -> None:
    compose = task_dir / "environment" / "docker-compose.yaml"
    compose.write_text(compose.read_text().replace("  main:\n", "  main:\n    environment: {A: compose, B: compose}\n"))
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text() + '\n[environment.env]\nB = "toml"\n')
    builder = EnvironmentBuilder(FakeBackend())
    task = load_task(task_dir)
    assert builder.spec_for(task, builder.image_for(task), name_hint="t").env == {"A": "compose", "B": "toml"}


def test_an_image_service_is_never_pulled(task_dir: Path) -> None:
    (task_dir / "environment" / "docker-compose.yaml").write_text(
        "services:\n  main: {depends_on: [cache]}\n  cache: {image: 'redis:7'}\n"
    )
    task = load_task(task_dir)
    with pytest.raises(SandboxError, match=r"image 'redis:7' of service 'cache' is not available here"):
        EnvironmentBuilder(FakeBackend()).image_for(task)
    builder = EnvironmentBuilder(FakeBackend(), aliases={"redis:7": "autoenv/base:bookworm"})
    spec = builder.spec_for(task, builder.image_for(task), name_hint="t")
    assert [(s.name, s.image) for s in spec.services] == [("cache", "autoenv/base:bookworm")]
    assert spec.depends_on == {"cache": "service_started"}


def test_the_fake_backend_refuses_services_as_a_trial_error(task_dir: Path, tmp_path: Path) -> None:
    backend = FakeBackend()
    runner = TrialRunner(backend, EnvironmentBuilder(backend), prewarm=False)
    result = runner.run(load_task(task_dir), OracleAgent(), tmp_path / "trial")
    assert result.reward is None and result.exception_info is not None
    assert result.exception_info.exception_type == "SandboxError"
    assert "fake sandbox runs no multi-container tasks" in result.exception_info.exception_message
    assert json.loads((tmp_path / "trial" / "result.json").read_text())["exception_info"] is not None
    assert backend.sandboxes == []


VOLUMES_EXAMPLE = EXAMPLE.parent / "compose-volumes"


def test_spec_carries_volumes_tmpfs_env_files_and_build_args(tmp_path: Path) -> None:
    root = tmp_path / "compose-volumes"
    shutil.copytree(VOLUMES_EXAMPLE, root)
    backend = _Recording()
    builder = EnvironmentBuilder(backend)
    task = load_task(root)
    spec = builder.spec_for(task, builder.image_for(task), name_hint="t")
    _, writer_build = backend.builds
    assert writer_build.args == {"RELEASE": "2024.3"}  # the build arg reaches the build
    assert spec.volumes == ["shared"] and spec.depends_on == {"writer": "service_completed_successfully"}
    assert [(m.volume, m.target, m.read_only) for m in spec.volume_mounts] == [("shared", "/shared", True)]
    assert [(t.target, t.size_bytes) for t in spec.tmpfs] == [("/scratch", 8 << 20)]
    (writer,) = spec.services
    assert writer.env == {"REGION": "eu-west", "OWNER": "ops team"}  # env_file, environment over it
    assert [(m.volume, m.target, m.read_only) for m in writer.volumes] == [("shared", "/out", False)]
    assert [(t.target, t.size_bytes) for t in writer.tmpfs] == [("/work", 4 << 20)]

    # Other args, another image; the same args, the same image.
    compose = root / "environment" / "docker-compose.yaml"
    compose.write_text(compose.read_text().replace('RELEASE: "2024.3"', 'RELEASE: "2025.1"'))
    builder.image_for(load_task(root))
    builder.image_for(load_task(root))
    writer_builds = [b for b in backend.builds if "-writer:" in b.tag]
    assert [b.args for b in writer_builds] == [{"RELEASE": "2024.3"}, {"RELEASE": "2025.1"}]
    assert writer_builds[0].tag != writer_builds[1].tag


def test_the_fake_backend_refuses_volumes_and_tmpfs(tmp_path: Path) -> None:
    root = tmp_path / "t"
    shutil.copytree(VOLUMES_EXAMPLE, root)
    (root / "environment" / "docker-compose.yaml").write_text("services:\n  main: {tmpfs: /scratch}\n")
    backend = FakeBackend()
    builder = EnvironmentBuilder(backend)
    task = load_task(root)
    spec = builder.spec_for(task, builder.image_for(task), name_hint="t")
    assert spec.services == [] and [t.target for t in spec.tmpfs] == ["/scratch"]
    with pytest.raises(SandboxError, match="fake sandbox runs no compose volumes or tmpfs mounts"):
        backend.create(spec)
