"""Findings 11, 13: task images do not pile up forever; a bad line in results.jsonl loses nothing after it."""

from __future__ import annotations

import contextlib
import secrets
import time
from pathlib import Path

import docker
import pytest
from pydantic import BaseModel

from autoenvscaling.execution.rundir import ResultsLog
from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import LABEL, BuildSpec, SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.janitor import collect_images


class Rec(BaseModel):
    n: int


def test_results_log_keeps_records_after_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"n": 1}\n{"n": oops}\n{"n": 3}\n{"n": 4')
    assert [r.n for r in ResultsLog(path, Rec).load()] == [1, 3]
    assert path.read_text() == '{"n": 1}\n{"n": oops}\n{"n": 3}\n'  # only the torn tail is cut
    ResultsLog(path, Rec).append(Rec(n=5))
    assert [r.n for r in ResultsLog(path, Rec).load()] == [1, 3, 5]


@pytest.mark.docker
def test_image_gc_removes_old_task_images_but_not_live_ones(docker_backend: DockerBackend, tmp_path: Path) -> None:
    repo = f"autoenv-gctest-{secrets.token_hex(3)}"
    tags = []
    for i in range(2):
        ctx = tmp_path / f"ctx{i}"
        ctx.mkdir()
        (ctx / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nLABEL gctest={repo}-{i}\n")
        tags.append(docker_backend.build(BuildSpec(context_dir=ctx, tag=f"{repo}/t{i}:1", labels={LABEL: "1"})))
    client = docker.from_env()
    try:
        with docker_backend.create(SandboxSpec(image=tags[0])):
            time.sleep(1.1)
            report = collect_images(client, repo=repo, max_age_sec=0, prune_build_cache=False)
            assert report.removed == [tags[1]] and report.kept_in_use == [tags[0]]
        assert collect_images(client, repo=repo, max_age_sec=None, max_total_bytes=0).removed == [tags[0]]
    finally:
        for tag in tags:
            with contextlib.suppress(docker.errors.ImageNotFound):
                client.images.remove(tag)
