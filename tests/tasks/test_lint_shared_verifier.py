"""The ``shared-verifier`` rule, as Harbor 0.26's ``harbor lint`` resolves the verifier mode (a warning here)."""

from __future__ import annotations

import pytest

from autoenvscaling.tasks.lint import lint_task
from autoenvscaling.tasks.lint_rules import RULES
from task_factory import TASK_TOML, MakeTask

OPT_OUT = (
    "\n[metadata.harbor.lint]\nignore = [\"shared-verifier\"]  # the tiny task's tests run in the agent's container\n"
)
SHARED = TASK_TOML.replace(OPT_OUT, "")


def test_the_factory_task_opts_out_the_harbor_way() -> None:
    assert OPT_OUT in TASK_TOML and OPT_OUT not in SHARED


@pytest.mark.parametrize(
    ("verifier", "flagged"),
    [
        ("", True),  # Harbor's default mode is shared
        ('environment_mode = "shared"\n', True),
        ('environment_mode = "separate"\n', False),
    ],
)
def test_shared_mode_is_a_warning(make_task: MakeTask, verifier: str, flagged: bool) -> None:
    toml = SHARED.replace("[verifier]\n", "[verifier]\n" + verifier)
    findings = [f for f in lint_task(make_task(files={"task.toml": toml})) if f.rule == "shared-verifier"]
    assert [(f.severity, f.file) for f in findings] == ([("warning", "task.toml")] if flagged else [])
    assert RULES["shared-verifier"] == "warning"
    if verifier and flagged:
        assert findings[0].line == toml.splitlines().index(verifier.strip()) + 1


def test_a_verifier_environment_means_separate_unless_the_mode_says_shared(make_task: MakeTask) -> None:
    table = '\n[verifier.environment]\ndocker_image = "autoenv/python:latest"\n'
    implied = [f.rule for f in lint_task(make_task(name="a", files={"task.toml": SHARED + table}))]
    explicit = SHARED.replace("[verifier]\n", '[verifier]\nenvironment_mode = "shared"\n') + table
    assert "shared-verifier" not in implied
    assert "shared-verifier" in [f.rule for f in lint_task(make_task(name="b", files={"task.toml": explicit}))]


@pytest.mark.parametrize(
    "ignore",
    ['["no-reward-write", "shared-verifier"]', '["shared-verifier"]'],
)
def test_harbor_lint_ignore_turns_it_off(make_task: MakeTask, ignore: str) -> None:
    toml = SHARED.replace("[verifier]\n", f"[metadata.harbor.lint]\nignore = {ignore}\n\n[verifier]\n")
    files: dict[str, str | None] = {"task.toml": toml, "tests/test.sh": "#!/bin/bash\necho done\n"}
    # Only Harbor's own rule names can be ignored: ours (an error here) still apply.
    assert [f.rule for f in lint_task(make_task(files=files))] == ["no-reward-write"]


@pytest.mark.parametrize("ignore", ["3", '"shared-verifier"', "[{x = 1}]"])
def test_a_malformed_harbor_lint_table_ignores_nothing(make_task: MakeTask, ignore: str) -> None:
    toml = SHARED.replace("[verifier]\n", f"[metadata.harbor.lint]\nignore = {ignore}\n\n[verifier]\n")
    assert [f.rule for f in lint_task(make_task(files={"task.toml": toml}))] == ["shared-verifier"]


@pytest.mark.parametrize(
    ("task_mode", "step_mode", "flagged"),
    [
        ("", "", True),
        ('environment_mode = "separate"\n', "", False),  # the steps inherit the task's mode
        ('environment_mode = "separate"\n', 'environment_mode = "shared"\n', True),  # one shared step is enough
        ("", 'environment_mode = "separate"\n', False),
    ],
)
def test_every_step_counts(make_task: MakeTask, task_mode: str, step_mode: str, flagged: bool) -> None:
    toml = SHARED.replace("[verifier]\n", "[verifier]\n" + task_mode)
    toml += f'\n[[steps]]\nname = "one"\n\n[steps.verifier]\ntimeout_sec = 60\n{step_mode}'
    files: dict[str, str | None] = {
        "task.toml": toml,
        "instruction.md": None,
        "solution/solve.sh": None,
        "steps/one/instruction.md": "Write /app/a.txt.\n",
        "steps/one/solution/solve.sh": "#!/bin/bash\ntouch /app/a.txt\n",
    }
    assert ("shared-verifier" in [f.rule for f in lint_task(make_task(files=files))]) is flagged
