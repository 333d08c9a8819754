"""Our lint next to Harbor 0.26's: findings name Harbor's rule id where one exists; the docs map every rule."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from autoenvscaling.cli.app import app
from autoenvscaling.tasks.lint import lint_task
from autoenvscaling.tasks.lint_rules import HARBOR_EQUIVALENT, HARBOR_LINT_RULES, RULES
from task_factory import MakeTask

DOC = Path(__file__).resolve().parents[2] / "docs" / "harbor-support.md"


def test_the_mapping_names_our_rules_and_harbor_rules_only() -> None:
    assert set(HARBOR_EQUIVALENT) <= set(RULES)
    assert set(HARBOR_EQUIVALENT.values()) <= HARBOR_LINT_RULES
    assert len(HARBOR_LINT_RULES) == 18  # Harbor 0.26's LintRule


def test_findings_carry_harbor_ids(make_task: MakeTask) -> None:
    root = make_task(
        files={
            "instruction.md": None,
            "task.toml": 'schema_version = "1.4"\nsurprise = 1\n[environment]\nworkdir = "/app"\n',
            "environment/Dockerfile": "FROM autoenv/base:bookworm\nWORKDIR /app\nCOPY tests/ /tests/\n",
        }
    )
    got = {(f.rule, f.harbor) for f in lint_task(root)}
    assert {
        ("missing-instruction", "invalid-task-files"),
        ("unknown-key", "unknown-config-field"),
        ("dockerfile-copies-tests", "agent-image-test-leak"),
    } <= got
    res = CliRunner().invoke(app, ["tasks", "lint", "--json", str(root)])
    (entry,) = json.loads(res.output)
    assert {(f["rule"], f["harbor"]) for f in entry["findings"]} == got


def test_docs_table_maps_every_rule_both_ways() -> None:
    """docs/harbor-support.md: one row per rule of ours (with Harbor's id or none), one per Harbor rule we lack."""
    text = DOC.read_text()
    section = text[text.index("## Lint rules next to Harbor's") :]
    rows = [[c.strip().strip("`") for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| `")]  # fmt: skip
    ours = {r[0]: r[1] for r in rows if r[0] in RULES}
    assert set(ours) == set(RULES)
    for rule, harbor in ours.items():
        assert harbor == HARBOR_EQUIVALENT.get(rule, "-"), rule
    mentioned = set(re.findall(r"`([a-z-]+)`", section))
    assert mentioned >= HARBOR_LINT_RULES
