"""A task whose Dockerfile copies from an image that cannot be pulled (``COPY --from=IMAGE``) builds on the local
stand-in its alias names, as ``FROM`` does: the image's files end up in the task image (a real engine build)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.tasks import load_task
from autoenvscaling.verify.environment import EnvironmentBuilder

pytestmark = pytest.mark.docker

# Names that resolve nowhere: without the aliases the build would try to pull them and fail.
UNREACHABLE_BASE = "registry.invalid/base:1"
UNREACHABLE_TOOLS = "registry.invalid/tools:latest"


@pytest.fixture
def tools_image(backend: DockerBackend, tmp_path: Path) -> Iterator[str]:
    """A local image holding one tool file, the stand-in for the unreachable tools image."""
    tag = f"autoenv-test/alias-tools:{os.getpid()}"
    ctx = tmp_path / "tools"
    ctx.mkdir()
    tool = "RUN printf '#!/bin/sh\\necho tool-ok\\n' > /tool && chmod 755 /tool"
    (ctx / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\n{tool}\n")
    backend.client.images.build(path=str(ctx), tag=tag, rm=True)
    yield tag
    backend.client.images.remove(tag, force=True)


def _task(root: Path) -> Path:
    (root / "environment").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "solution").mkdir()
    (root / "task.toml").write_text('schema_version = "1.4"\n[task]\nname = "autoenv/alias-copy-from"\n')
    (root / "instruction.md").write_text("Run /usr/local/bin/tool.\n")
    (root / "environment" / "Dockerfile").write_text(
        f"FROM {UNREACHABLE_BASE}\nCOPY --from={UNREACHABLE_TOOLS} /tool /usr/local/bin/tool\nWORKDIR /app\n"
    )
    (root / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    (root / "solution" / "solve.sh").write_text("#!/bin/bash\ntool\n")
    return root


def test_copy_from_an_aliased_image_builds(backend: DockerBackend, tools_image: str, tmp_path: Path) -> None:
    task = load_task(_task(tmp_path / "alias-copy-from"))
    builder = EnvironmentBuilder(backend, aliases={UNREACHABLE_BASE: BASE_IMAGE, UNREACHABLE_TOOLS: tools_image})
    image = builder.image_for(task)
    try:
        with backend.create(SandboxSpec(image=image, name_hint="alias-copy-from")) as sb:
            assert sb.exec("tool; pwd").stdout == "tool-ok\n/app\n"
    finally:
        backend.client.images.remove(image, force=True)
