"""The shipped examples lint as their metadata says: valid ones clean, broken ones with their lint checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.images.catalog import catalog_names
from autoenvscaling.tasks import find_task_dirs, lint_task, load_task

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TASKS = find_task_dirs([EXAMPLES]) if EXAMPLES.is_dir() else []


def test_examples_exist() -> None:
    verdicts = [load_task(t).config.metadata.get("expected_verdict") for t in TASKS]
    assert verdicts.count("valid") >= 6
    assert verdicts.count("invalid") >= 6


@pytest.mark.parametrize("task_dir", TASKS, ids=lambda p: p.relative_to(EXAMPLES).as_posix())
def test_example_lint_matches_expectation(task_dir: Path) -> None:
    meta = load_task(task_dir).config.metadata
    findings = lint_task(task_dir, known_images=catalog_names())
    errors = {f"lint:{f.rule}" for f in findings if f.severity == "error"}
    if meta.get("expected_verdict") == "valid":
        assert findings == []
    elif meta.get("expected_verdict") == "invalid":
        assert errors == {c for c in meta.get("expected_checks", []) if c.startswith("lint:")}
    else:
        assert errors == set()  # no stated verdict: at least no lint errors
