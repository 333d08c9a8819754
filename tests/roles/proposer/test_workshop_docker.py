"""The workshop container: no Docker socket, no network, and only /workshop/task comes out, without links."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.workshop import DRAFT_DIR, TEMPLATE_DIR, Workshop, stage_workshop
from autoenvscaling.sandbox.docker import DockerBackend

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def workshop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workshop]:
    staging = tmp_path_factory.mktemp("stage")
    domain = DomainContext(name="terminal", guide="# guide\n")
    stage_workshop(staging, domain=domain, readme="# README\n", digest_md="# digest\n", trial_dirs=[],
                   start_dir=TEMPLATE_DIR)  # fmt: skip
    backend = DockerBackend()
    ws = Workshop(backend, "autoenv/terminal:latest", name_hint="workshop-test")
    try:
        ws.start(staging)
        yield ws
    finally:
        ws.stop()
        backend.client.close()


def test_layout_and_tool_stubs(workshop: Workshop) -> None:
    res = workshop.sandbox.exec("cd /workshop && ls && ls task && cat README.md && check")
    assert res.stdout.startswith("README.md\nexamples\nguide.md\ntask\ntrajectories\n")
    assert "instruction.md" in res.stdout and "# README" in res.stdout
    assert res.exit_code == 2 and "harness tool" in res.stderr


def test_no_docker_socket_and_no_network(workshop: Workshop) -> None:
    sb = workshop.sandbox
    assert sb.exec("ls /var/run/docker.sock /run/docker.sock").exit_code != 0
    assert sb.exec("ls /sys/class/net").stdout.split() == ["lo"]
    probe = "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\""
    assert sb.exec(probe, timeout=20).exit_code != 0


def test_copy_out_takes_only_the_draft_and_never_follows_links(workshop: Workshop, tmp_path: Path) -> None:
    sb = workshop.sandbox
    setup = (
        f"ln -sf /etc/passwd {DRAFT_DIR}/instruction.md && ln -s /etc {DRAFT_DIR}/tests/etc "
        f"&& ln -s /workshop/README.md {DRAFT_DIR}/readme-link && mkfifo {DRAFT_DIR}/pipe "
        f"&& ln -s ../task.toml {DRAFT_DIR}/tests/rel-link && echo ok > {DRAFT_DIR}/environment/data.txt"
    )
    assert sb.exec(setup).exit_code == 0, sb.exec(setup).output
    copy = workshop.copy_draft(tmp_path / "draft")
    assert copy.ok, copy.error
    files = sorted(p.relative_to(copy.path).as_posix() for p in copy.path.rglob("*"))
    assert "instruction.md" not in files and "tests/etc" not in files and "readme-link" not in files
    assert "pipe" not in files and "README.md" not in files and "guide.md" not in files
    assert {"task.toml", "environment/Dockerfile", "environment/data.txt", "tests/test.sh"} <= set(files)
    assert not any(p.is_symlink() for p in copy.path.rglob("*"))
    host_passwd = Path("/etc/passwd").read_text()
    assert all(p.read_text(errors="replace") != host_passwd for p in copy.path.rglob("*") if p.is_file())
    # Links to absolute paths are already dropped when the archive leaves the container (tarfile's data
    # filter); a relative link gets as far as the copy, which skips it and says so.
    assert "tests/rel-link" not in files
    assert any(s.startswith("tests/rel-link (symbolic link -> ../task.toml)") for s in copy.skipped)


def test_the_starting_template_is_a_valid_task(tmp_path: Path) -> None:
    from autoenvscaling.validate.run import ValidationRun
    from autoenvscaling.validate.validator import ValidationConfig

    backend = DockerBackend()
    try:
        (report,), _ = ValidationRun(tmp_path / "run", backend, ValidationConfig(repeats=1)).run([TEMPLATE_DIR])
    finally:
        backend.client.close()
    assert report.verdict.value == "valid", (report.failed_checks, report.error)
