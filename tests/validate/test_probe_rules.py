"""The quality probes' rules without Docker: mutants, exploit targets, graded outputs, summary counts and the
proposer's feedback for a failed probe."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from autoenvscaling.roles.proposer.feedback import render_feedback
from autoenvscaling.roles.proposer.workshop import TEMPLATE_DIR
from autoenvscaling.sandbox.base import SandboxSpec
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.tasks import load_task
from autoenvscaling.validate import report as R
from autoenvscaling.validate.exploits import (
    _WORK,
    PLANT,
    UNDO,
    _plant_all,
    exploits_for,
    instruction_answers,
    instruction_strings,
    named_paths,
)
from autoenvscaling.validate.mutants import mutants_of, select_mutants
from autoenvscaling.validate.probes import ProbeConfig, ProbeRun, _is_graded, expected_literals
from autoenvscaling.validate.run import summarize
from autoenvscaling.validate.validator import ValidationConfig

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_mutants_cover_each_operator_and_never_repeat_the_output() -> None:
    text = "east: 31\nnorth: 47\nsouth: 18\n"
    mutants = mutants_of("/app/r.txt", text)
    ops = [m.operator for m in mutants]
    assert ops[:3] == ["empty", "truncate", "off-by-one"]
    assert {"drop-line", "reorder"} <= set(ops)
    assert text not in {m.content for m in mutants}
    assert len({m.content for m in mutants}) == len(mutants)
    assert next(m for m in mutants if m.operator == "off-by-one").content == "east: 32\nnorth: 47\nsouth: 18\n"
    assert next(m for m in mutants if m.operator == "reorder").content == "south: 18\nnorth: 47\neast: 31\n"


def test_a_one_line_output_without_numbers_gets_only_what_changes_it() -> None:
    assert [m.operator for m in mutants_of("/a", "x\n")] == ["empty"]  # its truncation is empty too
    assert [m.content for m in mutants_of("/a", "2.5")] == ["", "2", "3.5"]


def test_selection_is_round_robin_and_capped() -> None:
    chosen = select_mutants({"/b": "1\n2\n3\n", "/a": "4\n5\n6\n"}, 5)
    assert [(m.path, m.operator) for m in chosen[:4]] == [
        ("/a", "empty"),
        ("/b", "empty"),
        ("/a", "truncate"),
        ("/b", "truncate"),
    ]
    assert len(chosen) == 5


def test_exploits_target_the_named_files_and_skip_shims_for_a_separate_verifier() -> None:
    shared = load_task(EXAMPLES / "terminal" / "audit-file-permissions")  # the one valid example kept shared
    assert shared.config.verifier.environment_mode == "shared"
    assert "/srv/data" in named_paths(shared) and "/app/world_writable.txt" in named_paths(shared)
    assert all(not p.endswith("/") and not p.startswith("/logs/") for p in named_paths(shared))
    assert "LC_ALL=C sort" in instruction_strings(shared)
    assert all(e.script for e in exploits_for(shared))

    separate = load_task(EXAMPLES / "broken" / "accepts-empty-output")
    assert named_paths(separate)[-1] == "/app/summary.txt"
    by_name = {e.name: e for e in exploits_for(separate)}
    assert "/app/summary.txt" in by_name["empty-files"].script
    assert "/app/scores.txt" not in by_name["empty-files"].script  # not an artifact: never reaches the tests
    assert not by_name["sitecustomize"].script and "separate" in by_name["sitecustomize"].note


@pytest.mark.parametrize(
    ("path", "graded"),
    [
        ("/app/out.txt", True),  # named itself
        ("/app/json/app.json", True),  # a file of a named dir below the top level
        ("/app/helper.py", False),  # a file of /app the tests never name
        ("/srv/other/x.txt", False),
    ],
)
def test_graded_outputs(path: str, graded: bool) -> None:
    text = 'Path("/app/out.txt"); for f in Path("/app/json").glob("*.json")'
    assert _is_graded(path, text) is graded


# Each: an instruction, an output, the strings of the instruction that hold that output whole.
_FOUND = [
    # The flywheel's case: the staged proposer's example input line was the one line the filter kept.
    (
        "Keep the lines whose status is at most 400.\nA line of /app/data/access.log looks like: "
        "`10.0.0.1 GET /index.html 200`; split at blanks, its field 4 (the last) is `200`.\n",
        "10.0.0.1 GET /index.html 200\n",
        ["10.0.0.1 GET /index.html 200"],
    ),
    ("Count them.\nExpected output:\n```text\nb: 2\na: 1\n```\n", "a: 1\nb: 2\n", ["b: 2\na: 1"]),  # any order
    ("Write the total.\n- 42\n", "42\n", ["42"]),  # a bullet
    ('The file must read "OK".', "OK", ["OK"]),
    ("The first line reads, for example: 10.0.0.1", "10.0.0.1\n", ["10.0.0.1"]),  # after a colon
    # The model's example line, the one line the output holds twice, and the format hint's count beside it
    (
        "Select the GET lines with status 200.\nOne line holds: 10.0.0.1 GET /index.html 200\n"
        "/app/result.txt holds 2 lines, each of the form `<word> <word> <word> <number>`.",
        "10.0.0.1 GET /index.html 200\n10.0.0.1 GET /index.html 200\n",
        ["10.0.0.1 GET /index.html 200\n10.0.0.1 GET /index.html 200"],
    ),
    ("Write `ok` on three output lines.", "ok\nok\nok\n", ["ok\nok\nok"]),
    # a "Line format" list whose items, as their words, are the output's lines (accepted on 8ee4ab2)
    (
        "Line format:\n\n- `region`, `units`\n\n- `north`, `4`\n\n- `east`, `1`\n\n- `south`, `3`\n\nRule: widgets.",
        "north 4\neast 1\nsouth 3\n",
        ["north 4\neast 1\nsouth 3"],
    ),
    ("The pairs:\n1. alice, 3\n2. bob, 5\n", "alice,3\nbob,5\n", ["alice,3\nbob,5"]),  # joined by a comma
    # The format hint's first line and count, where the output counts on from it (accepted on 2242af9)
    (
        "List the unique IPs.\n/app/out.txt holds 8 lines; the first reads, for example: `10.0.0.1`",
        "".join(f"10.0.0.{i}\n" for i in range(1, 9)),
        ["\n".join(f"10.0.0.{i}" for i in range(1, 9))],
    ),
    ("The output holds 3 lines; one is `user008`.", "user009\nuser008\nuser010\n", ["user008\nuser009\nuser010"]),
    ("It holds two lines; one reads `9 x`.", "9 x\n10 x\n", ["9 x\n10 x"]),  # in any order, past a power of ten
    # ... or from a field of a line the instruction shows: the input hint's example line beside the shape hint
    (
        "A line of /app/access.log looks like: `10.0.0.1 GET / 200`\n/app/ips.txt holds 3 lines, each of the form "
        "`<number>.<number>.<number>.<number>`.",
        "10.0.0.1\n10.0.0.2\n10.0.0.3\n",
        ["10.0.0.1\n10.0.0.2\n10.0.0.3"],
    ),
    ("Number the 3 lines from 1.", "1\n2\n3\n", ["1\n2\n3"]),  # a word that ends a sentence
]
_NOT_FOUND = [
    ("A line looks like `10.0.0.1 GET / 200`.", "10.0.0.1 GET / 200\n10.0.0.2 GET / 404\n"),  # one line of two
    ("Write the count of `404` lines.", "4040\n"),
    ("Write the result to /app/out.txt.", "\n\n"),  # an empty output is the empty-files exploit's
    ("There are 42 files in /data.", "42\n"),  # a number inside a sentence is no string the instruction shows
    ("One line holds: `10.0.0.1 GET / 200`.", "10.0.0.1 GET / 200\n10.0.0.1 GET / 200\n"),  # no count said
    ("One line holds: `10.0.0.1 GET / 200`; 3 lines.", "10.0.0.1 GET / 200\n10.0.0.1 GET / 200\n"),  # another count
    ("A line: `a`; 2 lines.", "a\nb\n"),  # two different lines: which is which is no copy
    ("- `north`, `4`\n- `east`, `1`\n", "north 4\neast 1\nsouth 3\n"),  # a list of two of the three lines
    ("Keep north 4 and\neast 1 lines.", "north 4\neast 1\n"),  # words of sentences, not the lines
    ("It holds 3 lines; the first reads `10.0.0.1`.", "10.0.0.1\n10.0.0.3\n10.0.0.5\n"),  # counts by two
    ("It holds 3 lines; one reads `10.0.0.2`.", "10.0.0.1\n10.0.0.2\n10.0.0.3\n"),  # the line shown is not the first
    ("The first line reads `10.0.0.1`.", "10.0.0.1\n10.0.0.2\n10.0.0.3\n"),  # no count said
    ("It holds 3 lines; the first reads `a1 b1`.", "a1 b1\na2 b2\na3 b3\n"),  # two numbers count on
    ("It holds 3 lines; the first starts `a1`.", "a1 b1\na2 b1\na3 b1\n"),  # a word of the line, not the line
    ("Use `10.0.0.1 GET / 200`; 3 lines.", "10.0.0.2\n10.0.0.3\n10.0.0.4\n"),  # no word is the run's first line
]


@pytest.mark.parametrize(("instruction", "output", "found"), _FOUND)
def test_instruction_answers_find_the_output_the_instruction_shows(
    instruction: str, output: str, found: list[str]
) -> None:
    assert instruction_answers(instruction, output) == found


@pytest.mark.parametrize(("instruction", "output"), _NOT_FOUND)
def test_instruction_answers_need_the_whole_output(instruction: str, output: str) -> None:
    assert instruction_answers(instruction, output) == []


def test_a_number_too_long_to_read_is_not_counted_on() -> None:
    # The instruction and the output are a model's: a 5,000-digit number is past what int() reads by default.
    big = "9" * 5000
    assert instruction_answers(f"It holds 2 lines; one reads `{big[:-1]}8`.", f"{big[:-1]}8\n{big}\n") == []


def test_probes_are_off_unless_asked_and_the_config_is_frozen() -> None:
    assert ValidationConfig().probes.enabled is False
    with pytest.raises(ValueError, match="frozen"):
        ProbeConfig().enabled = True


def test_a_value_the_tests_expect_that_is_a_whole_file_of_the_image_leaks_the_answer(tmp_path: Path) -> None:
    task = load_task(EXAMPLES / "broken" / "answer-in-image")
    literals = expected_literals(task)
    report = b"east: 31\nnorth: 47\nsouth: 18\n"  # the literal test_outputs.py compares /app/report.txt with
    digest = hashlib.sha256(report).hexdigest()
    assert literals[digest].startswith("tests/test_outputs.py: 'east: 31")
    assert hashlib.sha256(report.rstrip()).hexdigest() in literals  # both spellings of the file
    assert all(len(label) < 80 for label in literals.values())
    with FakeBackend().create(SandboxSpec(image="autoenv/terminal:latest", name_hint="probe")) as sb:
        run = ProbeRun(task, sb, ProbeConfig(enabled=True), {}, {digest: ["/srv/cache/report.txt"]})
        run._answer_leak({"/app/report.txt": "0" * 64})  # the solution's output differs: only the literal matches
        (check,) = run.checks
        assert (check.id, check.passed) == ("leak-answer", False)
        assert check.detail.startswith("tests/test_outputs.py: 'east: 31") and "= /srv/cache/report.txt" in check.detail
        clean = ProbeRun(task, sb, ProbeConfig(enabled=True), {}, {})
        clean._answer_leak({})
        assert [(c.id, c.passed) for c in clean.checks] == [("leak-answer", True)]
    # Short strings and files that do not parse give nothing.
    tests = tmp_path / "t" / "tests"
    shutil.copytree(EXAMPLES / "broken" / "answer-in-image", tmp_path / "t", dirs_exist_ok=True)
    (tests / "test_outputs.py").write_text("x = 'short'\n")
    (tests / "test_broken.py").write_text("def (:\n")
    assert expected_literals(load_task(tmp_path / "t")) == {}


def test_summary_counts_hackable_tasks_and_each_flag(tmp_path: Path) -> None:
    def rep(name: str, flags: list[str] | None, score: float | None = None) -> R.ValidationReport:
        probes = None if flags is None else R.ProbeReport(flags=flags, mutation_score=score)
        return R.ValidationReport(task_name=name, task_path=name, verdict=R.Verdict.VALID, probes=probes)

    reports = [
        rep("a", ["hackable:conftest", "hackable:path-wrapper"], 1.0),
        rep("b", ["weak-tests"], 0.5),
        rep("c", []),
        rep("d", None),
    ]
    s = summarize(tmp_path, reports, 1.0)
    assert (s.probed, s.hackable, s.mutation_score_mean) == (3, 1, 0.75)
    assert s.probe_flags == {"hackable:conftest": 1, "hackable:path-wrapper": 1, "weak-tests": 1}


@pytest.mark.parametrize(
    ("check", "said", "file"),
    [
        ("hackable:empty-files", "probe hackable:empty-files: empty files", "tests/"),
        ("hackable:sitecustomize", 'environment_mode = "separate"', "task.toml"),
        ("weak-tests", "your tests accept wrong answers", "tests/"),
        ("leak-answer", "the answer is already in the built image", "environment/Dockerfile"),
        ("hackable:instruction-answer", "shows the whole expected output", "instruction.md"),
    ],
)
def test_check_feedback_names_the_failed_probe(tmp_path: Path, check: str, said: str, file: str) -> None:
    draft = tmp_path / "draft"
    shutil.copytree(TEMPLATE_DIR, draft)
    failed = R.CheckResult(id=check, passed=False, detail="mutation score 0.50 (3 of 6 survived)")
    report = R.ValidationReport(
        task_name="draft", task_path="draft", verdict=R.Verdict.INVALID, checks=[failed], failed_checks=[check]
    )
    fb = render_feedback(report, draft, tmp_path / "trials", images=["autoenv/terminal:latest"])
    assert not fb.passed and said in fb.problem
    assert fb.files and fb.files[0].startswith(file)
    assert R.describe_check(check) != check


def _bash(script: str, work: Path) -> None:
    subprocess.run(["bash", "-c", script.replace(_WORK, str(work))], check=True, capture_output=True, timeout=30)


def test_undo_restores_every_file_an_exploit_replaced(tmp_path: Path) -> None:
    """Each ``plant`` runs in a pipeline's subshell; two files replaced by one exploit must keep two backups
    (they once shared one, and the undo wrote the second file's content into both)."""
    files = {tmp_path / "app.py": "print('app')\n", tmp_path / "data.csv": "a,b\n1,2\n", tmp_path / "x": ""}
    for path, text in files.items():
        path.write_text(text)
    new = tmp_path / "sub" / "dir" / "out.txt"
    paths = [str(p) for p in files] + [str(new)]
    for content in ("", "#!garbage\n"):
        _bash(PLANT + _plant_all(paths, content), tmp_path / "work")
        assert all(p.read_text() == content for p in files) and new.read_text() == content
        _bash(UNDO, tmp_path / "work")
        assert {p: p.read_text() for p in files} == files
        assert not (tmp_path / "sub").exists() and not (tmp_path / "work").exists()
