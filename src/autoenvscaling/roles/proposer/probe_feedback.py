"""What the proposer's ``check`` says when a model probe failed: the alignment judge (``judge:<criterion>``)
or the adversarial solver (``hackable:adversarial``), see ``validate/model_probes.py``.

Each is named by its check id, with the judge's explanation or the attempt's evidence, the fix it implies and
the draft file to change, so the proposer can harden its draft. A judge in advisory mode fails no check; its
flags are notes on a passed check.
"""

from __future__ import annotations

from autoenvscaling.validate import report as R

_INSTRUCTION, _SOLVE, _DOCKERFILE, _TESTS = "instruction.md", "solution/solve.sh", "environment/Dockerfile", ""

# criterion -> (the file to change; "" = the first test file), the fix.
JUDGE_FIXES: dict[str, tuple[str, str]] = {
    "behavior-in-description": (
        _INSTRUCTION,
        "say in the instruction every output, value, format and order the tests check",
    ),
    "behavior-in-tests": (_TESTS, "make the tests check everything the instruction asks for"),
    "anti-cheating": (
        _TESTS,
        "make the tests fail on empty, constant or copied outputs and compute or hide their expected values",
    ),
    "hard-coded-solution": (_SOLVE, "make solution/solve.sh compute its outputs from the inputs"),
    "file-references": (_INSTRUCTION, "name in the instruction, with its exact path, every file the tests read"),
    "structured-data-schema": (
        _INSTRUCTION,
        "give the exact shape of each structured output in the instruction (keys or columns, order, types)",
    ),
    "tests-or-solution-in-image": (
        _DOCKERFILE,
        "keep the tests, the solution and the expected outputs out of the image",
    ),
}
ADVERSARIAL_FIX = (
    "a solver told to pass your tests WITHOUT doing the task got a reward: make the tests check values the agent "
    "must compute, fail on empty or placeholder outputs, and trust no file or tool the agent can change"
)


def model_probe_problem(check: R.CheckResult, test_file: str) -> tuple[str, str] | None:
    """``(problem, file to change)`` for a failed model probe; None for any other check."""
    detail = check.detail.strip().splitlines()[0][:300] if check.detail.strip() else ""
    if check.id == R.ADVERSARIAL:
        return f"probe {check.id}: {ADVERSARIAL_FIX}" + (f" (what it did: {detail})" if detail else ""), test_file
    if not check.id.startswith(R.JUDGE_PREFIX):
        return None
    file, fix = JUDGE_FIXES.get(check.id.removeprefix(R.JUDGE_PREFIX), (_TESTS, "make the task meet it"))
    said = f" (the judge: {detail})" if detail else ""
    return f"probe {check.id}: the alignment judge failed your draft on this criterion{said}: {fix}", file or test_file


def judge_notes(report: R.ValidationReport) -> list[str]:
    """An advisory judge's failed criteria, as notes on a passed check."""
    judge = report.probes.judge if report.probes else None
    if judge is None or judge.mode == "blocking":
        return []
    return [
        f"the alignment judge (advisory) flagged {R.JUDGE_PREFIX}{c.id}: {c.explanation}"[:300]
        for c in judge.criteria
        if c.outcome == "fail"
    ]
