"""Every shipped example gets the verdict (and failed check ids) its task.toml metadata declares."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.tasks import load_task
from autoenvscaling.tasks.model import find_task_dirs
from autoenvscaling.validate.report import ValidationReport
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALL = find_task_dirs([EXAMPLES])
FLAKY = [t for t in ALL if t.name == "flaky-test"]
# Flagged only by the quality probes (tests/validate/test_probe_examples.py runs them with the probes on).
PROBED = [t for t in ALL if "quality-probe" in load_task(t).config.metadata.get("tags", [])]
REGULAR = [t for t in ALL if t not in FLAKY and t not in PROBED]


def _expected(task_dir: Path) -> tuple[str, set[str]]:
    meta = load_task(task_dir).config.metadata
    return str(meta["expected_verdict"]), set(meta.get("expected_checks", []))


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ValidationReport]:
    run_dir = tmp_path_factory.mktemp("validate") / "run"
    run = ValidationRun(run_dir, DockerBackend(), ValidationConfig(repeats=3), concurrency=2)
    done, summary = run.run(REGULAR)
    assert summary.total == len(REGULAR)
    assert (run_dir / "summary.json").is_file()
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == len(REGULAR)
    return {r.task_path: r for r in done}


@pytest.mark.parametrize("task_dir", REGULAR, ids=[f"{t.parent.name}/{t.name}" for t in REGULAR])
def test_example_verdict(task_dir: Path, reports: dict[str, ValidationReport]) -> None:
    verdict, checks = _expected(task_dir)
    rep = reports[str(task_dir)]
    assert rep.verdict.value == verdict, (rep.failed_checks, rep.error, rep.checks)
    assert set(rep.failed_checks) == checks


@pytest.mark.parametrize("task_dir", FLAKY, ids=[t.name for t in FLAKY])
def test_flaky_example_is_caught(task_dir: Path, tmp_path: Path) -> None:
    # The test passes with probability 1/2 per run; 10 runs all agreeing happens with probability 2/1024.
    run = ValidationRun(tmp_path / "run", DockerBackend(), ValidationConfig(repeats=10, run_nop=False))
    (rep,), _ = run.run([task_dir])
    assert rep.verdict.value == "invalid"
    assert rep.failed_checks == ["oracle-flaky"]
