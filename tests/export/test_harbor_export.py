"""The exported dataset's ``dataset.toml``: Harbor's registry manifest with Harbor's task digests, in a layout
``harbor run -p EXPORT_DIR`` accepts (checked here by Harbor 0.26's rules, without Harbor installed)."""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autoenvscaling.cli.app import app
from autoenvscaling.export.harbor_dataset import export_harbor_dataset
from autoenvscaling.export.round import export_round
from autoenvscaling.pool import Calibration, EnvStatus, Pool
from autoenvscaling.tasks.dataset import dataset_task_dirs, read_manifest, task_digest
from autoenvscaling.validate.report import ValidationReport, Verdict
from pool_tasks import write_task

NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$")
DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")


def test_task_digest_is_harbors_content_hash(tmp_path: Path) -> None:
    """Harbor's packager: sha256 over "path NUL sha256(file) LF" of the published files, in path order."""
    task = tmp_path / "t"
    files = {
        "task.toml": 'schema_version = "1.4"\n',
        "instruction.md": "Do it.\n",
        "README.md": "about\n",
        "environment/Dockerfile": "FROM x\n",
        "tests/test.sh": "#!/bin/bash\n",
        "tests/data/b.txt": "b\n",
        "solution/solve.sh": "#!/bin/bash\n",
        "steps/one/instruction.md": "step\n",
        # not published: other top-level files, Harbor's default ignores, ignore files
        "notes.txt": "scratch\n",
        "tests/__pycache__/m.cpython-311.pyc": "x",
        "tests/m.pyc": "x",
        "solution/solve.sh.swp": "x",
        "environment/.DS_Store": "x",
        "tests/.harborignore": "# no rules\n",  # its rules are not applied (tasks/dataset.py)
    }
    for rel, text in files.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(text)
    published = ["README.md", "environment/Dockerfile", "instruction.md", "solution/solve.sh",
                 "steps/one/instruction.md", "task.toml", "tests/data/b.txt", "tests/test.sh"]  # fmt: skip
    outer = hashlib.sha256()
    for rel in published:
        outer.update(f"{rel}\0{hashlib.sha256(files[rel].encode()).hexdigest()}\n".encode())
    assert task_digest(task) == f"sha256:{outer.hexdigest()}"


@pytest.mark.skipif(not os.environ.get("AUTOENV_HARBOR_SRC"), reason="AUTOENV_HARBOR_SRC (Harbor's source) not set")
def test_task_digest_equals_harbors_packager_on_the_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    """With Harbor's source at hand (AUTOENV_HARBOR_SRC=<dir holding the harbor package>), its own packager."""
    monkeypatch.syspath_prepend(os.environ["AUTOENV_HARBOR_SRC"])
    packager = importlib.import_module("harbor.publisher.packager").Packager
    examples = Path(__file__).resolve().parents[2] / "examples"
    tasks = sorted(p.parent for p in examples.glob("*/*/task.toml"))
    assert tasks
    for task in tasks:
        assert task_digest(task) == "sha256:" + packager.compute_content_hash(task)[0], task


def _fill(pool: Pool, tasks_dir: Path) -> None:
    for topic in ("csv", "nginx", "git"):
        env = pool.add(write_task(tasks_dir / topic, topic), domain="ops", round=1)
        pool.record_validation(env.id, ValidationReport(task_name=topic, task_path="/x", verdict=Verdict.VALID))
        pool.record_calibration(env.id, Calibration(attempts=4, passes=2))


def _harbor_run_p_accepts(export: Path) -> list[Path]:
    """What ``harbor run -p`` reads (Harbor 0.26's local dataset): each child dir with a task.toml that parses,
    an environment/ dir (or docker_image), an instruction.md (or each step's), a test script, inputs inside the
    task. Returns the task dirs it would run; fails on a child dir it would silently skip."""
    tasks = []
    for child in sorted(export.iterdir()):
        if child.is_file():
            assert child.name in {"dataset.toml", "dataset.json"}, child
            continue
        config = tomllib.loads((child / "task.toml").read_text())
        assert (child / "environment").is_dir() or config.get("environment", {}).get("docker_image")
        steps = [s["name"] for s in config.get("steps", [])]
        for where in [child / "steps" / s for s in steps] or [child]:
            assert (where / "instruction.md").is_file(), where
            assert (where / "tests" / "test.sh").is_file() or (child / "tests" / "test.sh").is_file(), where
        assert not any(p.is_symlink() for p in child.rglob("*")), child
        tasks.append(child)
    return tasks


def test_export_writes_harbors_dataset_toml(pool: Pool, tasks_dir: Path, tmp_path: Path) -> None:
    _fill(pool, tasks_dir)
    out = tmp_path / "export"
    manifest = export_harbor_dataset(pool, out, EnvStatus.LEARNABLE, name="me/envs", description="three")
    text = (out / "dataset.toml").read_text()
    assert text.startswith("[dataset]\n")  # Harbor's order: [dataset], then [[tasks]]
    raw = tomllib.loads(text)
    assert raw["dataset"] == {"name": "me/envs", "description": "three", "keywords": []}
    assert set(raw) == {"dataset", "tasks", "verifier"}  # [verifier] and each task's path: for rLLM's loader
    assert raw["verifier"] == {"script": "tests/test.sh"}
    task_dirs = _harbor_run_p_accepts(out)
    assert sorted(p.name for p in task_dirs) == sorted(t.path for t in manifest.tasks) == ["csv", "git", "nginx"]
    refs = raw["tasks"]
    assert [r["name"] for r in refs] == [f"autoenv/{t.path}" for t in manifest.tasks]  # the tasks' [task] names
    for ref, t in zip(refs, manifest.tasks, strict=True):
        assert set(ref) == {"name", "digest", "path"} and NAME.match(ref["name"]) and DIGEST.match(ref["digest"])
        assert ref["path"] == t.path
        assert ref["digest"] == task_digest(out / t.path)
    assert read_manifest(out / "dataset.toml").dataset.name == "me/envs"
    assert [p.name for p in dataset_task_dirs(out)] == [t.path for t in manifest.tasks]  # autoenv eval reads it


def test_round_export_and_pool_export_command_write_it(pool: Pool, tasks_dir: Path, tmp_path: Path) -> None:
    _fill(pool, tasks_dir)
    export = export_round(pool, tmp_path / "round", round_=3, solver_trials=[], episodes=[])
    raw = tomllib.loads((Path(export.dataset_dir) / "dataset.toml").read_text())
    assert raw["dataset"]["name"] == "autoenv/round-003" and len(raw["tasks"]) == 3
    pool.close()
    dest = tmp_path / "cli-export"
    res = CliRunner().invoke(app, ["pool", "export", str(dest), "--pool", str(tmp_path / "pool"), "--name", "org/x"])
    assert res.exit_code == 0, res.output
    assert tomllib.loads((dest / "dataset.toml").read_text())["dataset"]["name"] == "org/x"
    bad = CliRunner().invoke(app, ["pool", "export", str(dest), "--pool", str(tmp_path / "pool"), "--name", "x"])
    assert bad.exit_code != 0 and "expected org/name" in str(bad.exception)
