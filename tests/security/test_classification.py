"""Finding 8: infrastructure failures are errors and the task's own faults are failed checks, never swapped."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker.errors
import pytest
from hostile import MakeTask

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import BuildError, BuildSpec, ExecResult, ImageUnusableError, SandboxError, SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend, DockerSandbox
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.tasks import load_task
from autoenvscaling.validate.leakage import LeakageScanError, check_leakage


class _Api:
    """The build endpoint of the engine, scripted."""

    def __init__(self, items: list[dict[str, str]] | None = None, raises: Exception | None = None) -> None:
        self.items, self.raises = items or [], raises

    def build(self, **_: Any) -> Iterator[dict[str, str]]:
        if self.raises is not None:
            raise self.raises
        yield from self.items

    def images(self) -> None:
        return None


class _Client:
    def __init__(self, api: _Api) -> None:
        self.api = api


@pytest.mark.parametrize(
    ("api", "expected"),
    [
        (_Api(raises=docker.errors.APIError("500 Server Error: daemon exploded")), SandboxError),
        (_Api([{"error": "write /var/lib/docker/tmp/x: no space left on device"}]), SandboxError),
        (_Api([{"error": "The command '/bin/sh -c exit 1' returned a non-zero code: 1"}]), BuildError),
    ],
)
def test_build_failures_are_classified(tmp_path: Path, api: _Api, expected: type[Exception]) -> None:
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    backend = DockerBackend(client=_Client(api))  # type: ignore[arg-type]
    with pytest.raises(expected) as err:
        backend.build(BuildSpec(context_dir=tmp_path, tag="autoenv-task/x:1", timeout_sec=10))
    assert (expected is BuildError) == isinstance(err.value, BuildError)


def test_failed_leakage_scan_is_never_clean(make_task: MakeTask) -> None:
    task = load_task(make_task())
    for result in (ExecResult(timed_out=True, exit_code=124), ExecResult(exit_code=127, stderr="find: not found")):
        backend = FakeBackend()
        backend.register(r"^find / ", lambda sb, call, r=result: r)
        with backend.create(SandboxSpec(image="autoenv/base:bookworm")) as sb, pytest.raises(LeakageScanError):
            check_leakage(task, sb)


@pytest.mark.docker
def test_lost_output_stream_is_an_error_not_exit_137(docker_backend: DockerBackend) -> None:
    with docker_backend.create(SandboxSpec(image=BASE_IMAGE)) as sb:
        assert isinstance(sb, DockerSandbox)
        shell = sb._shells[""]
        threading.Timer(0.5, shell.interrupt).start()  # the engine drops the attach stream mid-command
        with pytest.raises(SandboxError, match="lost the output stream"):
            sb.exec("sleep 3")


@pytest.mark.docker
@pytest.mark.parametrize(
    "tail",
    ["USER nosuchuser\n", 'ENTRYPOINT ["true"]\n', "RUN rm -f /bin/bash /usr/bin/bash\n"],
    ids=["bad-user", "exiting-entrypoint", "no-bash"],
)
def test_broken_images_are_the_tasks_fault(make_task: MakeTask, docker_backend: DockerBackend, tail: str) -> None:
    from autoenvscaling.verify.environment import EnvironmentBuilder

    task = load_task(make_task(dockerfile=f"FROM {BASE_IMAGE}\nWORKDIR /app\n{tail}"))
    builder = EnvironmentBuilder(docker_backend)
    spec = builder.spec_for(task, builder.image_for(task), name_hint="broken")
    t0 = time.monotonic()
    with pytest.raises(ImageUnusableError):
        docker_backend.create(spec).start()
    assert time.monotonic() - t0 < 15
