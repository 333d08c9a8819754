"""``check``'s answer: novelty before any Docker work, then the first failing check only, the file to change and
at most five lines of evidence (reports and trial dirs made by hand: no Docker)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.feedback import (
    MAX_DETAIL,
    CheckFeedback,
    expected_vs_got,
    pytest_failure,
    render_feedback,
)
from autoenvscaling.roles.proposer.tools import CheckRecord, DraftTools, ToolsConfig
from autoenvscaling.roles.proposer.workshop import TEMPLATE_DIR, Workshop, stage_workshop
from autoenvscaling.sandbox.base import BuildSpec, SandboxSpec
from autoenvscaling.sandbox.fake import FakeBackend, FakeSandbox
from autoenvscaling.validate import report as R
from autoenvscaling.verify.results import AgentContext, AgentInfo, TaskId, TrialResult

IMAGES = ["autoenv/terminal:latest"]
TEST_PY = 'from pathlib import Path\n\n\ndef test_sum():\n    assert Path(__file__).read_text()[:0] + "25" == "26"\n'


def report(*checks: tuple[str, str], name: str = "draft") -> R.ValidationReport:
    failed = [R.CheckResult(id=cid, passed=False, detail=detail) for cid, detail in checks]
    return R.ValidationReport(
        task_name=name,
        task_path=name,
        verdict=R.Verdict.INVALID if failed else R.Verdict.VALID,
        checks=failed,
        failed_checks=sorted({c.id for c in failed}),
    )


def draft(tmp_path: Path) -> Path:
    d = tmp_path / "draft"
    shutil.copytree(TEMPLATE_DIR, d)
    return d


def trial(trials: Path, label: str, *, exit_code: int | None = 0, solve: str = "", tests: str = "") -> None:
    root = trials / f"draft__{label}"
    (root / "agent").mkdir(parents=True)
    (root / "verifier").mkdir()
    (root / "agent" / "oracle.txt").write_text(solve)
    (root / "verifier" / "test-stdout.txt").write_text(tests)
    result = TrialResult(
        task_name="draft",
        trial_name=root.name,
        trial_uri=root.as_uri(),
        task_id=TaskId(path="draft"),
        task_checksum="x",
        agent_info=AgentInfo(name="oracle"),
        agent_result=AgentContext(metadata={"exit_code": exit_code}),
    )
    (root / "result.json").write_text(result.model_dump_json())


def real_pytest_output(tmp_path: Path) -> str:
    """A failing test run by the real pytest (its location shows as run/tests/test_outputs.py:5)."""
    tests = tmp_path / "run" / "tests"
    tests.mkdir(parents=True)
    (tests / "test_outputs.py").write_text(TEST_PY)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests / "test_outputs.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1, run.stdout
    return run.stdout


# -- the first failing check only ------------------------------------------------------------------------------


def test_failing_tests_give_the_test_file_and_expected_vs_got(tmp_path: Path) -> None:
    trials = tmp_path / "trials"
    trial(trials, "oracle-1", tests=real_pytest_output(tmp_path))
    trial(trials, "nop", tests="1 passed in 0.01s\n")
    rep = report((R.NOP, "reward 1"), (R.ORACLE, "0/1 runs scored 1 (rewards: 0)"))
    fb = render_feedback(rep, draft(tmp_path), trials, images=IMAGES)
    assert (fb.passed, fb.problems, fb.files) == (False, 2, ["tests/test_outputs.py"])
    assert fb.problem.startswith("the reference solution did not score 1 (0/1 runs scored 1")
    assert "do-nothing" not in fb.problem + "".join(fb.detail)  # the nop failure waits for the next check
    assert fb.detail[0] == "test_sum failed at tests/test_outputs.py:5"
    assert "expected '26', got '25'" in fb.detail and fb.detail[-1].startswith("1 failed")
    assert len(fb.detail) <= MAX_DETAIL


def test_a_failing_solution_shows_the_end_of_its_output(tmp_path: Path) -> None:
    trials = tmp_path / "trials"
    solve = "".join(f"step {i}\n" for i in range(12)) + "awk: cannot open /app/data.txt\n"
    trial(trials, "oracle-1", exit_code=2, solve=solve, tests="F\n1 failed in 0.01s\n")
    fb = render_feedback(report((R.ORACLE, "0/1 runs scored 1")), draft(tmp_path), trials, images=IMAGES)
    assert fb.files == ["solution/solve.sh"] and "exit code 2" in fb.problem
    assert fb.detail == ["step 8", "step 9", "step 10", "step 11", "awk: cannot open /app/data.txt"]


def test_a_lint_error_comes_first_and_names_its_file(tmp_path: Path) -> None:
    d = draft(tmp_path)
    (d / "tests" / "test.sh").write_text("#!/bin/bash\npython3 -m pytest -q /tests/test_outputs.py\n")
    rep = report(
        (R.REWARD_MISSING, "oracle-1: no reward file"),
        (R.ORACLE, "0/1 runs scored 1"),
        ("lint:no-reward-write", "never writes"),
    )
    fb = render_feedback(rep, d, tmp_path / "trials", images=IMAGES)
    assert fb.problem.startswith("tests/test.sh: never writes /logs/verifier/reward.txt")
    assert (fb.files, fb.problems) == (["tests/test.sh"], 2)  # the oracle's failure follows from the reward's


def test_a_build_failure_keeps_the_end_of_the_log(tmp_path: Path) -> None:
    d = draft(tmp_path)
    (d / "environment" / "Dockerfile").write_text("FROM autoenv/terminal:latest\nRUN apt-get install -y nope\n")
    log = "\n".join(f"Get:{i} http://deb example" for i in range(20))
    detail = f"build failed\nStep 1/2 : FROM autoenv/terminal:latest\nStep 2/2 : RUN apt-get install -y nope\n{log}\n"
    fb = render_feedback(report((R.BUILD, detail + "E: Unable to locate package nope")), d, tmp_path, images=IMAGES)
    assert fb.problem == "build failed at Dockerfile line 2: RUN apt-get install -y nope"
    assert fb.files == ["environment/Dockerfile"]
    assert len(fb.detail) == MAX_DETAIL and fb.detail[-1] == "E: Unable to locate package nope"


def test_a_passing_report_keeps_its_notes(tmp_path: Path) -> None:
    fb = render_feedback(report(), draft(tmp_path), tmp_path, images=IMAGES, skipped=["link (symbolic link)"])
    assert fb.passed and fb.notes == ["not copied out: link (symbolic link)"] and fb.problems == 0


CHAINED = """\
FF                                                                       [100%]
=================================== FAILURES ===================================
_____________________________ test_types_are_exact _____________________________

    def test_types_are_exact():
>       data = json.loads(Path("/app/json/app.json").read_text())

/tests/test_outputs.py:43:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
/usr/lib/python3.11/pathlib.py:1058: in read_text
    with self.open(mode='r', encoding=encoding, errors=errors) as f:
>       return io.open(self, mode, buffering, encoding, errors, newline)
E       FileNotFoundError: [Errno 2] No such file or directory: '/app/json/app.json'

/usr/lib/python3.11/pathlib.py:1045: FileNotFoundError
_________________________________ test_other __________________________________
E       assert 1 == 2
=========================== short test summary info ============================
FAILED ../tests/test_outputs.py::test_types_are_exact - FileNotFoundError: [E...
2 failed in 0.23s
"""


def test_pytest_failure_of_a_chained_traceback_points_at_the_test_file() -> None:
    file, lines = pytest_failure(CHAINED)
    assert file == "tests/test_outputs.py"
    assert lines == [
        "test_types_are_exact failed at tests/test_outputs.py:43",
        '> data = json.loads(Path("/app/json/app.json").read_text())',
        "E FileNotFoundError: [Errno 2] No such file or directory: '/app/json/app.json'",
        "2 failed in 0.23s",
    ]
    assert pytest_failure("bash: python3: command not found\n") == (None, [])


@pytest.mark.parametrize(
    ("source", "error", "said"),
    [
        (
            'assert out.read_text() == "26\\n"',
            "AssertionError: assert '25\\n' == '26\\n'",
            "expected '26\\n', got '25\\n'",
        ),
        ("assert 3 == count(rows)", "assert 3 == 4", "expected 3, got 4"),
        ('assert got == EXPECTED["a"]', "assert 1 == 2", None),  # neither side is a literal: not guessed
        ('assert x == "a", "wrong"', "AssertionError: wrong", None),
        ("assert f(a, b) == 3", "assert 2 == 3", None),
    ],
)
def test_expected_vs_got_only_when_one_side_is_a_literal(source: str, error: str, said: str | None) -> None:
    assert expected_vs_got(source, error) == said


# -- DraftTools.check: novelty first, then the compact text ----------------------------------------------------


class CountingBackend(FakeBackend):
    """The fake backend, counting the Docker work a check would cost (builds, containers)."""

    def __init__(self) -> None:
        super().__init__()
        self.builds = 0
        self.containers = 0

    def build(self, spec: BuildSpec) -> str:
        self.builds += 1
        return super().build(spec)

    def create(self, spec: SandboxSpec) -> FakeSandbox:
        self.containers += 1
        return super().create(spec)


@pytest.fixture
def tools(tmp_path: Path, terminal_domain: DomainContext) -> tuple[DraftTools, CountingBackend]:
    backend = CountingBackend()
    staging = tmp_path / "stage"
    stage_workshop(staging, domain=terminal_domain, readme="r", digest_md="d", trial_dirs=[], start_dir=TEMPLATE_DIR)
    workshop = Workshop(backend, "autoenv/terminal:latest")
    workshop.start(staging)
    config = ToolsConfig(max_checks=3)
    return DraftTools(workshop, backend, tmp_path / "ep", "t", config=config, references=[TEMPLATE_DIR]), backend


def test_a_copy_is_answered_before_any_docker_work(tools: tuple[DraftTools, CountingBackend]) -> None:
    draft_tools, backend = tools
    containers = backend.containers  # the workshop's own
    out = draft_tools.check()
    assert (backend.builds, backend.containers) == (0, containers)
    assert not out.ok and draft_tools.checks_left == 2
    assert draft_tools.checks[0].failed_checks == ["duplicate-of-example"]
    lines = out.text.splitlines()
    assert lines[0] == "check 1/3: FAILED."
    assert lines[1].startswith("Problem: your draft is still nearly the same task as draft_template")
    assert lines[2] == (
        "Files to change: /workshop/task/instruction.md, /workshop/task/solution/solve.sh, "
        "/workshop/task/tests/test_outputs.py"
    )
    assert lines[3] == "  | nothing was built or run: a copy is not checked further"
    assert lines[-1] == "Checks left: 2 of 3. Fix this, then run `check` again." and len(lines) == 5
    check_dir = draft_tools.episode_dir / "checks" / "01"
    assert (check_dir / "feedback.txt").read_text() == out.text + "\n"
    assert not (check_dir / "report.json").exists() and not (check_dir / "trials").exists()


def test_check_text_is_the_first_problem_its_file_five_lines_and_the_budget(
    tools: tuple[DraftTools, CountingBackend], tmp_path: Path
) -> None:
    draft_tools = tools[0]
    record = CheckRecord(index=1, draft_dir=tmp_path, content_hash=None, passed=False)
    fb = CheckFeedback(
        passed=False, problem="p", files=["tests/test.sh"], detail=[str(i) for i in range(9)], problems=3
    )
    draft_tools.checks.append(record)
    text = draft_tools._check_text(record, fb)
    assert text.splitlines() == [
        "check 1/3: FAILED (3 problems; the first one is shown).",
        "Problem: p",
        "File to change: /workshop/task/tests/test.sh",
        *(f"  | {i}" for i in range(5)),
        "Checks left: 2 of 3. Fix this, then run `check` again.",
    ]
    passed = record.model_copy(update={"index": 2, "passed": True})
    draft_tools.checks.append(passed)
    text = draft_tools._check_text(passed, CheckFeedback(passed=True, notes=["instruction.md: relative path"]))
    assert text.splitlines() == [
        "check 2/3: PASSED. It builds, solution/solve.sh scores 1, doing nothing scores 0, nothing leaks. "
        "Reply `submit` to hand it in (or improve it and check again).",
        "- note: instruction.md: relative path",
    ]
    last = record.model_copy(update={"index": 3})
    draft_tools.checks.append(last)
    assert draft_tools._check_text(last, fb).endswith("\nThat was your last check: reply `submit` now.")
