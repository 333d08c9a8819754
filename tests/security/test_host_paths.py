"""Finding 1: an ``artifacts`` entry cannot put a file anywhere on the host (12: nor can a pool import copy one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile import MakeTask

from autoenvscaling.errors import UserInputError
from autoenvscaling.pool.storage import stage_copy
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.tasks import TaskFormatError, load_task
from autoenvscaling.verify.confine import artifact_dest
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.trial import TrialRunner
from autoenvscaling.verify.trial_agents import OracleAgent


@pytest.mark.parametrize("entry", ["/../../../../root/.ssh/authorized_keys", "relative/x", "/app/../../etc", "/"])
def test_escaping_artifact_is_a_load_error(make_task: MakeTask, entry: str) -> None:
    root = make_task(top=f'artifacts = ["{entry}"]')
    with pytest.raises(TaskFormatError, match="artifacts") as err:
        load_task(root)
    assert "\n" not in str(err.value)


def test_artifact_dest_refuses_links_out(tmp_path: Path) -> None:
    artifacts = tmp_path / "trial" / "artifacts"
    artifacts.mkdir(parents=True)
    (artifacts / "app").symlink_to(tmp_path)  # left by an earlier artifact
    assert artifact_dest(artifacts, "/x/y.txt") == (artifacts / "x" / "y.txt").resolve()
    with pytest.raises(UserInputError, match="outside"):
        artifact_dest(artifacts, "/app/pwned")


@pytest.mark.docker
def test_artifacts_land_inside_the_trial_dir(
    make_task: MakeTask, docker_backend: DockerBackend, tmp_path: Path
) -> None:
    root = make_task(
        top='artifacts = ["/app/out.txt", "/app/dir"]',
        solve="echo hi > /app/out.txt; mkdir /app/dir; ln -s /etc /app/dir/etc",
    )
    runner = TrialRunner(docker_backend, EnvironmentBuilder(docker_backend), prewarm=False)
    before = {p for p in tmp_path.rglob("*")}
    res = runner.run(load_task(root), OracleAgent(), tmp_path / "trial")
    assert res.exception_info is None, res.exception_info
    assert (tmp_path / "trial" / "artifacts" / "app" / "out.txt").read_text() == "hi\n"
    new = {p for p in tmp_path.rglob("*")} - before
    assert all(p.is_relative_to(tmp_path / "trial") for p in new)
    assert not (tmp_path / "trial" / "artifacts" / "app" / "dir" / "etc").exists()  # absolute links dropped


def test_pool_import_drops_symlinks(tmp_path: Path, make_task: MakeTask) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host only\n")
    root = make_task()
    (root / "environment" / "data.txt").symlink_to(secret)
    (root / "tests" / "linked").symlink_to(tmp_path, target_is_directory=True)
    staged = stage_copy(root, tmp_path / "pool-tmp")
    assert not (staged / "environment" / "data.txt").exists()
    assert not (staged / "tests" / "linked").exists()
    assert "host only" not in "".join(p.read_text() for p in staged.rglob("*") if p.is_file())
