"""The alignment judge with the scripted model: structured answers, advisory vs blocking, unusable answers."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from autoenvscaling.cli.app import app
from autoenvscaling.llm.scripted import ScriptedError, ScriptedModel
from autoenvscaling.roles.judge import CRITERIA, JudgeConfig, judge_checks, judge_task, response_schema
from autoenvscaling.tasks import load_task

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TASK = EXAMPLES / "terminal" / "log-error-summary"


def _answer(**fails: str) -> str:
    """A rubric answer: every criterion passes except ``fails`` (id with '_' for '-' -> explanation)."""
    fail = {k.replace("_", "-"): v for k, v in fails.items()}
    items = [{"id": c, "outcome": "fail" if c in fail else "pass", "explanation": fail.get(c, "")} for c in CRITERIA]
    return json.dumps({"criteria": items})


def test_the_judge_reads_the_task_and_flags_each_failed_criterion() -> None:
    model = ScriptedModel(
        ["Here is my review:\n```json\n" + _answer(anti_cheating="tests accept an empty report") + "\n```"]
    )
    report = judge_task(load_task(TASK), model, JudgeConfig(enabled=True))
    (messages,) = model.calls
    shown = messages[1].content
    assert "=== instruction.md ===" in shown and "=== tests/test_outputs.py ===" in shown
    assert "=== solution/solve.sh ===" in shown and "=== environment/Dockerfile ===" in shown
    assert all(c in messages[0].content for c in CRITERIA)
    assert model.samplings[0] is not None and model.samplings[0].temperature == 0.0
    assert [r.id for r in report.criteria] == list(CRITERIA) and report.error is None
    assert report.flags == ["judge:anti-cheating"]
    assert judge_checks(report) == []  # advisory: a flag, not a failed check


def test_the_judge_is_not_shown_the_authors_bookkeeping() -> None:
    """``[metadata]`` and ``[task].description`` are the author's words about the task (on the broken examples,
    the very flag expected): the judge reads the files, not a label."""
    task = load_task(EXAMPLES / "broken" / "undocumented-rules")
    assert "judge:behavior-in-description" in task.paths.config.read_text()
    model = ScriptedModel([_answer()])
    judge_task(task, model, JudgeConfig(enabled=True))
    shown = model.calls[0][1].content
    assert "=== task.toml ===" in shown and "environment_mode" in shown and "autoenv/broken-undocumented-rules" in shown
    assert "expected_checks" not in shown and "never states" not in shown and "broken-example" not in shown


def test_a_blocking_judge_fails_the_check() -> None:
    model = ScriptedModel([_answer(file_references="the tests read /app/report.txt, the instruction says report")])
    report = judge_task(load_task(TASK), model, JudgeConfig(enabled=True, blocking=True))
    (check,) = judge_checks(report)
    assert (check.id, check.passed) == ("judge:file-references", False) and "/app/report.txt" in check.detail


def test_an_unusable_answer_gets_one_reminder_then_is_an_error_not_a_verdict() -> None:
    partial = json.dumps({"criteria": [{"id": "anti-cheating", "outcome": "fail", "explanation": "x"}]})
    model = ScriptedModel(["I think it is fine.", _answer()])
    report = judge_task(load_task(TASK), model, JudgeConfig(enabled=True))
    assert len(model.calls) == 2 and "unusable" in model.calls[1][-1].content
    assert report.error is None and report.flags == []

    model = ScriptedModel([partial, '{"criteria": "none"}'])
    report = judge_task(load_task(TASK), model, JudgeConfig(enabled=True, blocking=True))
    assert report.error is not None and "unusable" in report.error
    assert report.flags == [] and judge_checks(report) == []

    report = judge_task(load_task(TASK), ScriptedModel([ScriptedError("HTTP 503")]), JudgeConfig(blocking=True))
    assert report.error is not None and "503" in report.error and judge_checks(report) == []


def test_the_schema_names_the_configured_criteria() -> None:
    fmt = response_schema(("anti-cheating", "hard-coded-solution"))
    item = fmt["json_schema"]["schema"]["properties"]["criteria"]["items"]
    assert fmt["type"] == "json_schema" and item["properties"]["id"]["enum"] == ["anti-cheating", "hard-coded-solution"]
    model = ScriptedModel([json.dumps({"criteria": [{"id": "anti-cheating", "outcome": "pass", "explanation": ""},
                                                    {"id": "hard-coded-solution", "outcome": "not_applicable",
                                                     "explanation": ""}]})])  # fmt: skip
    config = JudgeConfig(enabled=True, criteria=("anti-cheating", "hard-coded-solution"))
    report = judge_task(load_task(TASK), model, config)
    assert [r.outcome for r in report.criteria] == ["pass", "not_applicable"] and not report.flags


def test_tasks_judge_command(tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([_answer(behavior_in_tests="nothing checks the 404 line")] * 2))
    runner = CliRunner()
    args = ["tasks", "judge", str(TASK), "--model", f"scripted:{replies}"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "behavior-in-tests: nothing checks the 404 line" in result.output
    assert "1 task(s) with a failed criterion" in result.output
    replies.write_text(json.dumps([_answer(behavior_in_tests="x")]))
    assert runner.invoke(app, [*args, "--blocking"]).exit_code == 1
    replies.write_text(json.dumps([_answer()]))
    out = runner.invoke(app, [*args, "--json", "--blocking"])
    assert out.exit_code == 0 and json.loads(out.output)["flags"] == []
