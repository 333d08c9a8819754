"""The quality probes on the shipped examples: each probe example is flagged by its probe and only by it; a
valid example gets no flag and stays valid.

The valid examples grade their outputs in a separate verifier (the shims never reach it), except
``audit-file-permissions``, whose tests read modes and owners in the agent's container: its ``test.sh`` loads
nothing from PATH, site hooks or conftest.py files, which the shims must not beat either."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.tasks import load_task
from autoenvscaling.tasks.model import find_task_dirs
from autoenvscaling.validate.probes import GENERATED_PROBES
from autoenvscaling.validate.report import ValidationReport
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALL = find_task_dirs([EXAMPLES])
PROBED = [t for t in ALL if "quality-probe" in load_task(t).config.metadata.get("tags", [])]
# Flagged by a model probe (the alignment judge) only: the rule probes must find nothing in them.
MODEL_PROBED = [t for t in PROBED if "model-probe" in load_task(t).config.metadata.get("tags", [])]
RULE_PROBED = [t for t in PROBED if t not in MODEL_PROBED]
VALID = [t for t in ALL if load_task(t).config.metadata.get("expected_verdict") == "valid"]
SHIMS = {"hackable:sitecustomize", "hackable:conftest", "hackable:path-wrapper"}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ValidationReport]:
    run_dir = tmp_path_factory.mktemp("probes") / "run"
    config = ValidationConfig(repeats=1, probes=GENERATED_PROBES)
    done, summary = ValidationRun(run_dir, DockerBackend(), config, concurrency=2).run(PROBED + VALID)
    assert summary.probed == sum(r.probes is not None for r in done)
    assert summary.hackable == sum(any(f.startswith("hackable:") for f in r.failed_checks) for r in done)
    return {r.task_path: r for r in done}


def test_there_is_an_example_per_probe() -> None:
    checks = {c for t in PROBED for c in load_task(t).config.metadata["expected_checks"]}
    assert {"leak-answer", "weak-tests", "hackable:empty-files", "hackable:sitecustomize"} <= checks
    assert "judge:behavior-in-description" in checks


@pytest.mark.parametrize("task_dir", RULE_PROBED, ids=[t.name for t in RULE_PROBED])
def test_probe_example_is_flagged_by_its_probe_only(task_dir: Path, reports: dict[str, ValidationReport]) -> None:
    rep = reports[str(task_dir)]
    expected = set(load_task(task_dir).config.metadata["expected_checks"])
    assert rep.verdict.value == "invalid", (rep.error, rep.checks)
    assert set(rep.failed_checks) == expected
    assert rep.probes is not None and set(rep.probes.flags) == expected


@pytest.mark.parametrize("task_dir", MODEL_PROBED, ids=[t.name for t in MODEL_PROBED])
def test_a_model_probe_example_passes_every_rule_probe(task_dir: Path, reports: dict[str, ValidationReport]) -> None:
    """What only the judge can tell (tests checking rules the instruction never states) is no rule probe's flag."""
    rep = reports[str(task_dir)]
    assert all(c.startswith("judge:") for c in load_task(task_dir).config.metadata["expected_checks"])
    assert rep.error is None and rep.verdict.value == "valid", rep.checks
    assert rep.probes is not None and rep.probes.exploits and not rep.probes.flags
    assert rep.probes.mutation_score is not None and rep.probes.mutation_score >= GENERATED_PROBES.mutation_threshold


@pytest.mark.parametrize("task_dir", VALID, ids=[f"{t.parent.name}/{t.name}" for t in VALID])
def test_valid_example_gets_no_flag(task_dir: Path, reports: dict[str, ValidationReport]) -> None:
    rep = reports[str(task_dir)]
    task = load_task(task_dir)
    assert rep.error is None
    assert rep.verdict.value == "valid", rep.checks
    assert rep.probes is not None
    if task.config.is_multi_step:
        assert rep.probes.notes
        return
    assert rep.probes.exploits and not rep.probes.flags and not rep.failed_checks
    ran = {e.name for e in rep.probes.exploits if e.ran}
    if task.config.verifier.environment_mode == "shared":  # the shims ran, and did not beat the tests
        assert {f"hackable:{n}" for n in ran} >= SHIMS
    assert rep.probes.mutation_score is None or rep.probes.mutation_score >= GENERATED_PROBES.mutation_threshold


def test_every_valid_example_but_one_grades_in_a_separate_verifier() -> None:
    shared = [f"{t.parent.name}/{t.name}" for t in VALID if load_task(t).config.verifier.environment_mode != "separate"]
    assert shared == ["terminal/audit-file-permissions"]
