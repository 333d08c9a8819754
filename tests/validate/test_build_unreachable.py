"""A build that fails because an image cannot be fetched from its registry (an air-gapped machine, a registry that
is down) is the verdict ``error`` naming the image to alias, not ``invalid``: the task is not at fault, and Harbor
fails such a trial as an environment error. A registry that answers (the image does not exist) and a failing
``RUN`` stay the task's ``build`` failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import BuildError, BuildSpec
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.validate.report import Verdict
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig, unreachable_image

DNS = "dial tcp: lookup {host} on 10.255.255.53:53: no such host"


def _task(root: Path, dockerfile: str) -> Path:
    files = {
        "task.toml": 'schema_version = "1.4"\n',
        "instruction.md": "Write 1 to /app/out.txt.\n",
        "environment/Dockerfile": dockerfile,
        "solution/solve.sh": "#!/bin/bash\necho 1 > /app/out.txt\n",
        "tests/test.sh": "#!/bin/bash\ngrep -qx 1 /app/out.txt && echo 1 > /logs/verifier/reward.txt"
        " || echo 0 > /logs/verifier/reward.txt\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_the_unreachable_image_is_named() -> None:
    from_step = BuildError(
        'building t failed: Get "https://registry-1.docker.io/v2/": ' + DNS.format(host="registry-1.docker.io"),
        log_tail="Step 1/3 : FROM python:3.12-slim\nGet ...",
    )
    message = unreachable_image(from_step)
    assert message is not None and "the image python:3.12-slim cannot be fetched here" in message
    assert "registry registry-1.docker.io did not answer" in message
    assert "--image-alias python:3.12-slim=<local image>" in message

    copy_from = BuildError(
        'building t failed: invalid from flag value ghcr.io/astral-sh/uv:latest: Get "https://ghcr.io/v2/": '
        + DNS.format(host="ghcr.io"),
        log_tail="Step 1/4 : FROM autoenv/base:bookworm\nStep 2/4 : COPY --from=ghcr.io/astral-sh/uv:latest /uv /bin/",
    )
    assert "--image-alias ghcr.io/astral-sh/uv:latest=<local image>" in (unreachable_image(copy_from) or "")

    # Answers of a registry, and a RUN step: the task's build failure.
    denied = BuildError("building t failed: pull access denied for nosuch/image, repository does not exist")
    run_step = BuildError("building t failed: The command '/bin/sh -c exit 3' returned a non-zero code: 3")
    assert unreachable_image(denied) is None and unreachable_image(run_step) is None


class _Unreachable(FakeBackend):
    def build(self, spec: BuildSpec) -> str:
        raise BuildError(
            'building x failed: Get "https://quay.io/v2/": ' + DNS.format(host="quay.io"),
            log_tail="Step 1/2 : FROM quay.io/org/base:1\n",
        )


def test_validate_gives_error_not_invalid(tmp_path: Path) -> None:
    task = _task(tmp_path / "unreachable", "FROM quay.io/org/base:1\nWORKDIR /app\n")
    (rep,), summary = ValidationRun(tmp_path / "run", _Unreachable(), ValidationConfig(repeats=1)).run([task])
    assert rep.verdict == Verdict.ERROR and rep.failed_checks == []
    assert rep.error is not None and "--image-alias quay.io/org/base:1=<local image>" in rep.error
    assert summary.by_verdict == {"error": 1}


@pytest.mark.docker
def test_engine_build_from_an_unresolvable_registry(tmp_path: Path) -> None:
    backend = DockerBackend()
    unreachable = _task(tmp_path / "unreachable", "FROM registry.invalid/org/base:1\nWORKDIR /app\n")
    broken = _task(tmp_path / "broken", f"FROM {BASE_IMAGE}\nWORKDIR /app\nRUN exit 3\n")
    (rep_u, rep_b), _ = ValidationRun(tmp_path / "run", backend, ValidationConfig(repeats=1)).run([unreachable, broken])
    assert rep_u.verdict == Verdict.ERROR, (rep_u.failed_checks, rep_u.checks)
    assert rep_u.error is not None and "registry.invalid/org/base:1" in rep_u.error
    assert rep_b.verdict == Verdict.INVALID and rep_b.failed_checks == ["build"]
