"""`autoenv tasks lint` and `autoenv tasks show` through the real typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autoenvscaling.cli.app import app
from task_factory import MakeTask

runner = CliRunner()


def test_lint_clean_tasks_exit_zero(make_task: MakeTask, tmp_path: Path) -> None:
    make_task(name="set/a")
    make_task(name="set/b")
    result = runner.invoke(app, ["tasks", "lint", str(tmp_path / "set")])
    assert result.exit_code == 0, result.output
    assert "linted 2 task(s): 0 error(s), 0 warning(s)" in result.output


def test_lint_errors_exit_one_and_json_lists_findings(make_task: MakeTask) -> None:
    bad = make_task(name="bad", files={"solution/solve.sh": None, "instruction.md": "Write out.txt\n"})
    good = make_task(name="good")
    result = runner.invoke(app, ["tasks", "lint", str(bad), str(good), "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert [p["task"] for p in payload] == [str(bad), str(good)]
    assert [(f["rule"], f["severity"]) for f in payload[0]["findings"]] == [
        ("missing-solution", "error"),
        ("relative-path-in-instruction", "warning"),
    ]
    assert payload[1]["findings"] == []


def test_lint_table_output(make_task: MakeTask) -> None:
    root = make_task(files={"tests/test.sh": "python3 -m pytest /tests\n"})
    result = runner.invoke(app, ["tasks", "lint", str(root)])
    assert result.exit_code == 1
    assert "no-reward-write" in result.output
    assert "test-script-no-shebang" in result.output
    assert "1 error(s), 1 warning(s)" in result.output


def test_lint_warnings_only_exit_zero(make_task: MakeTask) -> None:
    root = make_task(files={"instruction.md": "Write out.txt\n"})
    assert runner.invoke(app, ["tasks", "lint", str(root)]).exit_code == 0


def test_lint_bad_path_is_a_one_line_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["tasks", "lint", str(tmp_path / "nope")])
    assert result.exit_code != 0
    assert "no such file or directory" in str(result.exception)


def test_show_prints_the_summary(make_task: MakeTask) -> None:
    result = runner.invoke(app, ["tasks", "show", str(make_task())])
    assert result.exit_code == 0, result.output
    for expected in (
        "autoenv/tiny",
        "1.4",
        "easy",
        "600 s",
        "1024 MB",
        "test_outputs.py",
        "Read /app/input.txt",
    ):
        assert expected in result.output


def test_show_lists_each_step_of_a_multi_step_task(monkeypatch: pytest.MonkeyPatch) -> None:
    from autoenvscaling.cli import tasks_cmd

    monkeypatch.setattr(tasks_cmd.console, "width", 260)
    task = Path(__file__).resolve().parents[2] / "examples" / "harbor-kinds" / "multi-step"
    result = runner.invoke(app, ["tasks", "show", str(task)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "not used (each step has its own)" in out and "2, reward: mean over the steps that ran" in out
    import_row = next(line for line in out.splitlines() if " import " in line)
    update_row = next(line for line in out.splitlines() if " update " in line)
    assert "/app/sales-jan.csv" in import_row and "steps/import/solution/solve.sh" in import_row
    assert "steps/import/tests/test_step.py" in import_row and "tests/test.sh" in import_row
    assert "300 s / 60 s, separate" in import_row and import_row.rstrip(" │").endswith("1")
    assert "sales-feb.csv, setup.sh" in update_row and "120 s / 60 s, separate" in update_row
