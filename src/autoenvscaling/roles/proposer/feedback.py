"""A validation report, rewritten as the compact feedback ``check`` returns to the proposer.

One line per problem, each saying what is wrong *and the fix it implies*, then short log tails where they
help (a failed build, the solution's output, the tests' output). Small models act on specific sentences
("the do-nothing run scored 1: your tests pass before any work is done") far better than on check ids.
"""

from __future__ import annotations

import re
from pathlib import Path

from autoenvscaling.roles.proposer.novelty import DUPLICATE_CHECK, NoveltyResult
from autoenvscaling.tasks import Finding, lint_task
from autoenvscaling.tasks.dockerfile import parse_instructions
from autoenvscaling.tasks.paths import CONTAINER_REWARD_TXT
from autoenvscaling.validate import report as R

_TAIL_LINES = 8
_LINE_CHARS = 200
_STEP = re.compile(r"^Step (\d+)/\d+ : (.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BUILD_NOISE = ("---> ", "Removing intermediate container", "Running in ")
_NOTABLE_WARNINGS = ("relative-path-in-instruction", "grading-download", "test-script-no-shebang")

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
}
_ORDER = (
    "lint:",
    R.BUILD,
    R.BUILD_TIMEOUT,
    "leak-",
    R.REWARD_MISSING,
    R.REWARD_INVALID,
    R.VERIFIER_TIMEOUT,
    R.ORACLE,
    R.ORACLE_TIMEOUT,
    R.ORACLE_FLAKY,
    R.NOP,
    DUPLICATE_CHECK,
)


def _rank(check_id: str) -> int:
    return next((i for i, p in enumerate(_ORDER) if check_id.startswith(p)), len(_ORDER))


def _tail(text: str, n: int = _TAIL_LINES) -> list[str]:
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    return [ln if len(ln) <= _LINE_CHARS else ln[: _LINE_CHARS - 3] + "..." for ln in lines[-n:]]


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


def _oracle_tails(trials_dir: Path, task_name: str) -> list[str]:
    trial = trials_dir / f"{task_name}__oracle-1"
    out: list[str] = []
    solve = _tail(_read(trial / "agent" / "oracle.txt"))
    if solve:
        out += ["  solution/solve.sh output (last lines):", *(f"  | {ln}" for ln in solve)]
    tests = _tail(_read(trial / "verifier" / "test-stdout.txt"))
    if tests:
        out += ["  tests/test.sh output (last lines):", *(f"  | {ln}" for ln in tests)]
    return out


def _check_lines(check: R.CheckResult, report: R.ValidationReport, trials_dir: Path) -> list[str]:
    cid = check.id
    if cid == R.ORACLE:
        return [
            f"the reference solution did not score 1 ({check.detail}): run solution/solve.sh's steps with "
            "`try` and make tests/test_*.py expect exactly what the solution produces",
            *_oracle_tails(trials_dir, report.task_name),
        ]
    if cid == R.NOP:
        return [
            f"the do-nothing run scored {check.detail.removeprefix('reward ')}: your tests pass before any work "
            "is done; make them check the result the instruction asks for"
        ]
    if cid == R.REWARD_MISSING:
        return [
            f"tests/test.sh finished without writing {CONTAINER_REWARD_TXT}: end it with `echo 1 > "
            f"{CONTAINER_REWARD_TXT}` when the tests pass, else `echo 0 > {CONTAINER_REWARD_TXT}`"
        ]
    if cid in _FIXES:
        return [_FIXES[cid]]
    return [f"{R.describe_check(cid)}: {check.detail}" if check.detail else R.describe_check(cid)]


def render_feedback(
    report: R.ValidationReport,
    draft_dir: Path,
    trials_dir: Path,
    *,
    images: list[str],
    novelty: NoveltyResult | None = None,
    skipped: list[str] | None = None,
) -> tuple[bool, list[str]]:
    """``(passed, lines)``: the check's verdict for the proposer and its compact report."""
    if report.verdict == R.Verdict.ERROR:
        return False, [f"the check could not run (not your draft's fault, or an unreadable draft): {report.error}"]
    findings = lint_task(draft_dir, known_images=images)
    dockerfile = _read(draft_dir / "environment" / "Dockerfile")
    lines: list[str] = []
    failed = sorted((c for c in report.checks if not c.passed), key=lambda c: _rank(c.id))
    lint_errors = [f for f in findings if f.severity == "error"]
    for f in lint_errors:
        lines.append(f"{_where(f)}: {f.message}")
    for c in failed:
        if c.id.startswith("lint:"):
            continue
        if c.id in (R.BUILD, R.BUILD_TIMEOUT):
            lines += build_feedback(c.detail, dockerfile, findings, images) if c.id == R.BUILD else [_FIXES[c.id]]
        elif c.id == R.ORACLE and R.REWARD_MISSING in report.failed_checks:
            continue  # follows from the missing reward, already said
        else:
            lines += _check_lines(c, report, trials_dir)
    if novelty is not None and not novelty.is_new:
        lines.append(
            f"your draft is still nearly the same task as {novelty.duplicate_of} (similarity: instruction "
            f"{novelty.instruction_similarity:.2f}, solution + tests {novelty.grading_similarity:.2f}): make a NEW "
            "task, with its own instruction, data, solution and tests that check what the instruction asks"
        )
    passed = not failed and not lint_errors and (novelty is None or novelty.is_new)
    notes = [f"note: {_where(f)}: {f.message}" for f in findings if f.rule in _NOTABLE_WARNINGS]
    notes += [f"note: not copied out: {s}" for s in skipped or []]
    return passed, list(dict.fromkeys(lines + notes))  # the oracle and nop runs often fail alike: say it once
