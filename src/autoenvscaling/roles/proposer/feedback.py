"""A validation report, rewritten as the compact feedback ``check`` returns to the proposer.

Only the first failing check is described (in ``_ORDER``: the problem that hides the others first): what is
wrong and the fix it implies, the draft file to change, and at most ``MAX_DETAIL`` lines of evidence (the
failing test's expected vs got, or a log tail). Small models act on one specific sentence ("the do-nothing run
scored 1: your tests pass before any work is done") far better than on a list of check ids, and every line of
feedback stays in their context for the rest of the episode.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from autoenvscaling.roles.proposer.novelty import DUPLICATE_CHECK, NoveltyResult
from autoenvscaling.roles.proposer.probe_feedback import judge_notes, model_probe_problem
from autoenvscaling.tasks import Finding, lint_task
from autoenvscaling.tasks.dockerfile import parse_instructions
from autoenvscaling.tasks.paths import CONTAINER_REWARD_TXT
from autoenvscaling.validate import report as R
from autoenvscaling.verify.results import TrialResult

MAX_DETAIL = 5
_TAIL_LINES = 8
_LINE_CHARS = 200
_STEP = re.compile(r"^Step (\d+)/\d+ : (.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BUILD_NOISE = ("---> ", "Removing intermediate container", "Running in ")
_NOTABLE_WARNINGS = ("relative-path-in-instruction", "grading-download", "test-script-no-shebang")
_DOCKERFILE, _SOLVE, _TEST_SH = "environment/Dockerfile", "solution/solve.sh", "tests/test.sh"

_FIXES: dict[str, str] = {
    R.BUILD_TIMEOUT: "the image build ran past [environment].build_timeout_sec: build less (fewer packages, "
    "smaller data)",
    R.ORACLE_FLAKY: "solution/solve.sh scored 1 on some runs only: remove randomness, time or order "
    "dependence from the solution and the tests",
    R.ORACLE_TIMEOUT: "solution/solve.sh ran past [agent].timeout_sec: make it finish sooner",
    R.LEAK_SOLUTION: "the solution is inside the built image: do not COPY solution/ (or its files) in the "
    "Dockerfile; the harness brings /solution in for the reference run only",
    R.LEAK_TESTS: "test files are inside the built image: do not COPY tests/ in the Dockerfile; the harness "
    "copies them to /tests after the agent finishes",
    R.LEAK_REWARD: "a reward file already exists in the built image: never create /logs/verifier/reward.* "
    "in the Dockerfile",
    R.REWARD_INVALID: f"{CONTAINER_REWARD_TXT} did not hold a number: write exactly 1 (pass) or 0 (fail)",
    R.VERIFIER_TIMEOUT: "tests/test.sh ran past [verifier].timeout_sec: make the tests faster",
    R.LEAK_ANSWER: "the answer is already in the built image (a file the solution writes exists there with the "
    "same content): do not put expected outputs in the image; the agent must compute them",
    R.WEAK_TESTS: "your tests accept wrong answers (emptied, truncated, reordered or off-by-one copies of the "
    "solution's output scored 1): make them check every value the instruction asks for",
}
# Quality probes (validate/probes.py): hackable:<exploit> -> the fix.
_EXPLOIT_FIXES: dict[str, str] = {
    "empty-files": "empty files at the paths the instruction names scored above 0: make the tests fail on an empty "
    "or missing output",
    "garbage-files": "garbage at the paths the instruction names scored above 0: make the tests parse and check "
    "the output's values",
    "echo-instruction": "the instruction's own strings echoed into its paths scored above 0: make the tests check "
    "values the agent must compute",
    "instruction-answer": "the instruction shows the whole expected output, and copying it scored above 0: show "
    "the output's form or one line of several, never all of it",
}
_EXPLOIT_FILES = {"instruction-answer": "instruction.md"}  # where the fix goes, where not in the tests
_SHIM_FIX = (
    "a shim in the agent's container (sitecustomize.py, conftest.py or a python/pytest wrapper on PATH) made "
    'the tests pass: set [verifier] environment_mode = "separate" with the outputs in artifacts'
)
# The file each check points at, where it does not depend on the run (oracle and nop are worked out).
_FILES: dict[str, str] = {
    R.BUILD: _DOCKERFILE,
    R.BUILD_TIMEOUT: _DOCKERFILE,
    R.IMAGE_UNUSABLE: _DOCKERFILE,
    R.LEAK_SOLUTION: _DOCKERFILE,
    R.LEAK_TESTS: _DOCKERFILE,
    R.LEAK_REWARD: _DOCKERFILE,
    R.LEAK_ANSWER: _DOCKERFILE,
    R.REWARD_MISSING: _TEST_SH,
    R.REWARD_INVALID: _TEST_SH,
    R.VERIFIER_TIMEOUT: _TEST_SH,
    R.ORACLE_TIMEOUT: _SOLVE,
    R.ORACLE_FLAKY: _SOLVE,
}
_ORDER = (
    "lint:",
    R.BUILD,
    R.BUILD_TIMEOUT,
    R.IMAGE_UNUSABLE,
    "leak-",
    R.REWARD_MISSING,
    R.REWARD_INVALID,
    R.VERIFIER_TIMEOUT,
    R.ORACLE,
    R.ORACLE_TIMEOUT,
    R.ORACLE_FLAKY,
    R.NOP,
    R.HACKABLE_PREFIX,
    R.WEAK_TESTS,
    R.JUDGE_PREFIX,
    DUPLICATE_CHECK,
)


class CheckFeedback(BaseModel):
    """What one check tells the proposer: the verdict and, for a failure, the first problem only."""

    passed: bool
    problem: str = ""  # what is wrong and the fix it implies
    files: list[str] = Field(default_factory=list)  # the draft files to change, relative to the task dir
    detail: list[str] = Field(default_factory=list)  # at most MAX_DETAIL lines: expected vs got, a log tail
    problems: int = 0  # failing checks in all; only the first is described
    notes: list[str] = Field(default_factory=list)  # for a pass: warnings worth a look


def _rank(check_id: str) -> int:
    return next((i for i, p in enumerate(_ORDER) if check_id.startswith(p)), len(_ORDER))


def _cut(line: str) -> str:
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 3] + "..."


def _tail(text: str, n: int = _TAIL_LINES) -> list[str]:
    return [_cut(ln.rstrip()) for ln in text.splitlines() if ln.strip()][-n:]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _where(f: Finding) -> str:
    return f"{f.file}:{f.line}" if f.line else f.file


def build_feedback(detail: str, dockerfile: str, findings: list[Finding], images: list[str]) -> list[str]:
    """The failing Dockerfile line and a short log tail; an unavailable base image said plainly."""
    lines: list[str] = []
    for f in findings:
        if f.rule == "uncataloged-base-image":
            base = f.message.split()[1] if f.message.startswith("FROM ") else f.message
            lines.append(f"base image {base} is not available here; use one of: {', '.join(images)}")
    steps = [m for ln in detail.splitlines() if (m := _STEP.match(ln.strip()))]
    instructions = parse_instructions(dockerfile)
    if steps and not (lines and steps[-1].group(2).upper().startswith("FROM ")):
        n, text = int(steps[-1].group(1)), steps[-1].group(2)
        line = instructions[n - 1].line if 0 < n <= len(instructions) else None
        where = f"Dockerfile line {line}" if line else "Dockerfile"
        lines.append(f"build failed at {where}: {text}")
    elif not lines:
        lines.append("the image did not build")
    log = [
        ln
        for raw in _ANSI.sub("", detail).splitlines()
        if (ln := raw.strip()) and not _STEP.match(ln) and not any(n in ln for n in _BUILD_NOISE)
    ]
    return lines + [f"  | {ln}" for ln in _tail("\n".join(log), 6)]


# -- reading the oracle and nop trials -----------------------------------------------------------------------

# /tests/test_x.py:5: or, relative to the directory pytest ran in, tests/test_x.py:5:
_PYTEST_LOCATION = re.compile(r"^(?:[^\s:]*/)?tests/([^\s:]+\.py):(\d+):")
_PYTEST_HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")
_PYTEST_SUMMARY = re.compile(r"^=*\s*\d+ (failed|passed|error)")
_LITERAL = re.compile(r"""^(['"\d\[{(-]|b['"]|None$|True$|False$)""")


def expected_vs_got(source: str, error: str) -> str | None:
    """``expected X, got Y`` from ``assert a == b`` when exactly one side of the source is a literal."""
    src = source.removeprefix("assert ").split(",")[0]
    err = error.removeprefix("AssertionError: ").removeprefix("assert ")
    if src.count(" == ") != 1 or err.count(" == ") != 1 or not source.startswith("assert "):
        return None
    (left, right), (shown_left, shown_right) = src.split(" == "), err.split(" == ")
    if _LITERAL.match(right.strip()) and not _LITERAL.match(left.strip()):
        return f"expected {shown_right}, got {shown_left}"
    if _LITERAL.match(left.strip()) and not _LITERAL.match(right.strip()):
        return f"expected {shown_left}, got {shown_right}"
    return None


def pytest_failure(output: str) -> tuple[str | None, list[str]]:
    """The first failing test of a pytest run: ``(tests/<file>, lines)`` with the test, the failing source line,
    its error and expected vs got where it can be told; ``(None, [])`` when the output holds no failure."""
    lines = output.splitlines()
    start = next((i for i, ln in enumerate(lines) if _PYTEST_HEADER.match(ln.strip())), None)
    if start is None:
        return None, []
    test = _PYTEST_HEADER.match(lines[start].strip())
    body = lines[start + 1 :]
    end = next((i for i, ln in enumerate(body) if _PYTEST_HEADER.match(ln.strip()) or ln.startswith("====")), None)
    body = body[:end]
    loc = next((m for ln in body if (m := _PYTEST_LOCATION.match(ln))), None)
    source = next((ln[1:].strip() for ln in body if ln.startswith(">")), "")
    first_e = next((i for i, ln in enumerate(body) if ln.startswith("E ")), None)
    errors: list[str] = []
    for ln in body[first_e:] if first_e is not None else []:
        if not ln.startswith("E"):
            break
        text = ln[1:].strip()
        if text and not text.startswith("+  where") and not text.startswith("+    where"):
            errors.append(text)
    file = f"tests/{loc.group(1)}" if loc else None
    head = f"{test.group(1) if test else 'a test'} failed" + (f" at {file}:{loc.group(2)}" if loc else "")
    verdict = expected_vs_got(source, errors[0]) if source and errors else None
    out = [head] + ([f"> {source}"] if source else []) + [f"E {e}" for e in errors[: 1 if verdict else 2]]
    out += [verdict] if verdict else []
    summary = next((ln.strip("= ") for ln in reversed(lines) if _PYTEST_SUMMARY.match(ln)), None)
    out += [summary] if summary else []
    return file, [_cut(ln) for ln in out[:MAX_DETAIL]]


def _solve_exit_code(trial: Path) -> int | None:
    try:
        result = TrialResult.model_validate_json(_read(trial / "result.json"))
    except ValidationError:
        return None
    code = result.agent_result.metadata.get("exit_code") if result.agent_result else None
    return code if isinstance(code, int) else None


def _test_files(draft_dir: Path) -> list[str]:
    tests = sorted(p.name for p in (draft_dir / "tests").glob("test_*.py")) if (draft_dir / "tests").is_dir() else []
    return [f"tests/{t}" for t in tests] or [_TEST_SH]


def _oracle(check: R.CheckResult, trial: Path) -> CheckFeedback:
    code = _solve_exit_code(trial)
    if code not in (None, 0):
        return CheckFeedback(
            passed=False,
            problem=f"solution/solve.sh failed (exit code {code}), so the reference solution did not score 1: "
            "make it run to the end in the image (try its steps with `try`)",
            files=[_SOLVE],
            detail=_tail(_read(trial / "agent" / "oracle.txt"), MAX_DETAIL),
        )
    tests_out = _read(trial / "verifier" / "test-stdout.txt")
    file, detail = pytest_failure(tests_out)
    target = file or _TEST_SH
    return CheckFeedback(
        passed=False,
        problem=f"the reference solution did not score 1 ({check.detail}): make {target} expect exactly what "
        "solution/solve.sh produces (run its steps with `try` to see it), or fix the solution",
        files=[target],
        detail=detail or _tail(tests_out, MAX_DETAIL),
    )


def _nop(check: R.CheckResult, trial: Path, draft_dir: Path) -> CheckFeedback:
    return CheckFeedback(
        passed=False,
        problem=f"the do-nothing run scored {check.detail.removeprefix('reward ')}: your tests pass before any "
        "work is done; make them check the result the instruction asks for",
        files=_test_files(draft_dir)[:1],
        detail=_tail(_read(trial / "verifier" / "test-stdout.txt"), 2),
    )


def _describe(
    check: R.CheckResult, report: R.ValidationReport, draft_dir: Path, trials_dir: Path, findings: list[Finding]
) -> CheckFeedback:
    """One failing check as a problem, the file to change and its evidence."""
    cid, file = check.id, _FILES.get(check.id)
    if cid.startswith("lint:"):
        f = next((f for f in findings if f.severity == "error" and f"lint:{f.rule}" == cid), None)
        if f is not None:
            return CheckFeedback(passed=False, problem=f"{_where(f)}: {f.message}", files=[f.file])
    if cid == R.ORACLE:
        return _oracle(check, trials_dir / f"{report.task_name}__oracle-1")
    if cid == R.NOP:
        return _nop(check, trials_dir / f"{report.task_name}__nop", draft_dir)
    trial = trials_dir / f"{report.task_name}__oracle-1"
    if cid == R.REWARD_MISSING:
        problem = (
            f"tests/test.sh finished without writing {CONTAINER_REWARD_TXT}: end it with `echo 1 > "
            f"{CONTAINER_REWARD_TXT}` when the tests pass, else `echo 0 > {CONTAINER_REWARD_TXT}`"
        )
        return CheckFeedback(
            passed=False,
            problem=problem,
            files=[_TEST_SH],
            detail=_tail(_read(trial / "verifier" / "test-stdout.txt"), 3),
        )
    if cid == R.ORACLE_TIMEOUT:
        return CheckFeedback(
            passed=False, problem=_FIXES[cid], files=[_SOLVE], detail=_tail(_read(trial / "agent" / "oracle.txt"), 3)
        )
    probe = model_probe_problem(check, _test_files(draft_dir)[0])
    if probe is not None:
        return CheckFeedback(passed=False, problem=probe[0], files=[probe[1]])
    if cid.startswith(R.HACKABLE_PREFIX):
        name = cid.removeprefix(R.HACKABLE_PREFIX)
        problem = _EXPLOIT_FIXES.get(name, _SHIM_FIX if name != "reward-file" else "")
        if problem:
            files = _test_files(draft_dir)[:1] if name in _EXPLOIT_FIXES else ["task.toml"]
            files = [_EXPLOIT_FILES[name]] if name in _EXPLOIT_FILES else files
            return CheckFeedback(passed=False, problem=f"probe {cid}: {problem}", files=files)
    if cid == R.WEAK_TESTS:
        detail = [check.detail] if check.detail else []
        return CheckFeedback(passed=False, problem=_FIXES[cid], files=_test_files(draft_dir)[:1], detail=detail)
    if cid in _FIXES:
        return CheckFeedback(passed=False, problem=_FIXES[cid], files=[file] if file else [])
    problem = f"{R.describe_check(cid)}" + (f": {check.detail.splitlines()[0]}" if check.detail.strip() else "")
    return CheckFeedback(passed=False, problem=_cut(problem), files=[file] if file else [])


def render_feedback(
    report: R.ValidationReport,
    draft_dir: Path,
    trials_dir: Path,
    *,
    images: list[str],
    skipped: list[str] | None = None,
) -> CheckFeedback:
    """The check's verdict for the proposer: passed, or the first failing check (by ``_ORDER``) alone."""
    skipped_notes = [f"not copied out: {s}" for s in skipped or []]
    if report.verdict == R.Verdict.ERROR:
        return CheckFeedback(
            passed=False,
            problem=f"the check could not run (not your draft's fault, or an unreadable draft): {report.error}",
            problems=1,
            detail=skipped_notes[:MAX_DETAIL],
        )
    findings = lint_task(draft_dir, known_images=images)
    failed = sorted((c for c in report.checks if not c.passed), key=lambda c: _rank(c.id))
    if any(c.id == R.REWARD_MISSING for c in failed):  # the oracle's failure follows from it: not a problem of its own
        failed = [c for c in failed if c.id != R.ORACLE]
    if not failed:
        notes = [f"{_where(f)}: {f.message}" for f in findings if f.rule in _NOTABLE_WARNINGS]
        return CheckFeedback(passed=True, notes=notes + judge_notes(report) + skipped_notes)
    first = failed[0]
    if first.id == R.BUILD:
        lines = build_feedback(first.detail, _read(draft_dir / _DOCKERFILE), findings, images)
        heads = [ln for ln in lines if not ln.startswith("  | ")]
        logs = [ln.removeprefix("  | ") for ln in lines if ln.startswith("  | ")]
        keep = max(0, MAX_DETAIL - len(heads) + 1)  # the log's end holds the error
        detail = heads[1:] + (logs[-keep:] if keep else [])
        feedback = CheckFeedback(passed=False, problem=heads[0], files=[_DOCKERFILE], detail=detail)
    else:
        feedback = _describe(first, report, draft_dir, trials_dir, findings)
    # Files left out of the copy explain many failures: said first, then the evidence, within the cap.
    detail = (skipped_notes + feedback.detail)[:MAX_DETAIL]
    return feedback.model_copy(update={"problems": len(failed), "detail": detail})


def novelty_feedback(novelty: NoveltyResult, draft_dir: Path, threshold: float) -> CheckFeedback:
    """A draft that is still a copy of a reference: said before any build, with the parts to make new."""
    files = ["instruction.md"] if novelty.instruction_similarity >= threshold else []
    if novelty.grading_similarity >= threshold or novelty.same_answer:
        files += [_SOLVE, *_test_files(draft_dir)[:1]]
    same = (
        "the same expected output from the same files"
        if novelty.same_answer
        else f"similarity: instruction {novelty.instruction_similarity:.2f}, solution + tests "
        f"{novelty.grading_similarity:.2f}"
    )
    return CheckFeedback(
        passed=False,
        problem=f"your draft is still nearly the same task as {novelty.duplicate_of} ({same}): make a NEW "
        "task, with its own instruction, data, solution and tests that check what the instruction asks",
        files=files,
        detail=["nothing was built or run: a copy is not checked further"],
        problems=1,
    )
