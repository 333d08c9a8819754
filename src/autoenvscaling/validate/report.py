"""Validation records: one ``ValidationReport`` per task (a line of results.jsonl) and the run summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field, computed_field


class Verdict(StrEnum):
    VALID = "valid"
    INVALID = "invalid"  # the task is broken: see failed_checks
    ERROR = "error"  # the infrastructure failed: see error
    TIMEOUT = "timeout"  # the task's own time limits were exceeded (build, oracle or tests)


# Check ids. Lint findings of severity "error" appear as "lint:<rule-id>".
BUILD = "build"
BUILD_TIMEOUT = "build-timeout"
ORACLE = "oracle"  # the reference solution never scored 1
ORACLE_FLAKY = "oracle-flaky"  # it scored 1 on some runs only
ORACLE_TIMEOUT = "oracle-timeout"
NOP = "nop"  # doing nothing scored > 0
LEAK_SOLUTION = "leak-solution"
LEAK_TESTS = "leak-tests"
LEAK_REWARD = "leak-reward"
REWARD_MISSING = "reward-missing"
REWARD_INVALID = "reward-invalid"
VERIFIER_TIMEOUT = "verifier-timeout"
TRIAL_WATCHDOG = "trial-watchdog"  # a phase outlived its declared limit plus the grace period
IMAGE_UNUSABLE = "image-unusable"  # the image cannot host a sandbox (no bash, bad USER, exiting ENTRYPOINT)
STORAGE_LIMIT = "storage-limit"  # a sandbox wrote more than [environment].storage_mb and was removed
# Quality probes (validate/probes.py): "hackable:<exploit>" for each scripted exploit the tests rewarded.
HACKABLE_PREFIX = "hackable:"
LEAK_ANSWER = "leak-answer"  # the reference solution's output already lies in the image
WEAK_TESTS = "weak-tests"  # too many mutants of the reference output still scored 1
# Model probes (validate/model_probes.py): the alignment judge's failed criteria, and the adversarial solver.
JUDGE_PREFIX = "judge:"
ADVERSARIAL = f"{HACKABLE_PREFIX}adversarial"  # a solver told to cheat got a reward by a confirmed exploit
TIMEOUT_CHECKS = frozenset({BUILD_TIMEOUT, ORACLE_TIMEOUT, VERIFIER_TIMEOUT, TRIAL_WATCHDOG})

CHECK_DESCRIPTIONS: dict[str, str] = {
    BUILD: "the image did not build",
    BUILD_TIMEOUT: "the image build ran past [environment].build_timeout_sec",
    ORACLE: "solution/solve.sh never scored 1",
    ORACLE_FLAKY: "solution/solve.sh scored 1 on some runs only (flaky tests or solution)",
    ORACLE_TIMEOUT: "solution/solve.sh ran past [agent].timeout_sec",
    NOP: "doing nothing scored above 0: the tests pass on the untouched environment",
    LEAK_SOLUTION: "the solution is present in the built image",
    LEAK_TESTS: "test files are present in the built image",
    LEAK_REWARD: "a reward file already exists in the built image",
    REWARD_MISSING: "tests/test.sh finished without writing /logs/verifier/reward.txt or reward.json",
    REWARD_INVALID: "the reward file does not hold a finite number",
    VERIFIER_TIMEOUT: "tests/test.sh ran past [verifier].timeout_sec",
    TRIAL_WATCHDOG: "a trial phase outlived its time limit and was stopped by the watchdog",
    IMAGE_UNUSABLE: "the image cannot run a sandbox (no bash, a USER that does not exist, or an exiting ENTRYPOINT)",
    STORAGE_LIMIT: "a sandbox wrote more than [environment].storage_mb to its filesystem and was removed",
    LEAK_ANSWER: "a file the reference solution writes already exists, same content, elsewhere in the image",
    WEAK_TESTS: "the tests accept too many wrong variants of the reference output (mutation score too low)",
}
EXPLOIT_DESCRIPTIONS: dict[str, str] = {
    "reward-file": "writing reward files before the tests",
    "empty-files": "empty files at the paths the instruction names",
    "garbage-files": "garbage files at the paths the instruction names",
    "echo-instruction": "the instruction's own strings echoed into the paths it names",
    "instruction-answer": "an output copied from the instruction, which shows it whole",
    "sitecustomize": "a sitecustomize.py that ends every Python process with exit 0",
    "conftest": "a conftest.py (in / and the work dir) that ends pytest with exit 0",
    "path-wrapper": "python/pytest wrappers that exit 0, early on PATH",
    "adversarial": "a solver model told to pass the tests without doing the task (a confirmed exploit)",
}


def is_probe_check(check_id: str) -> bool:
    """Whether a check id is a quality probe's (rule or model probe): a flag, not a validity check."""
    return check_id.startswith((HACKABLE_PREFIX, JUDGE_PREFIX)) or check_id in (LEAK_ANSWER, WEAK_TESTS)


def describe_check(check_id: str) -> str:
    if check_id.startswith("lint:"):
        return f"lint rule {check_id[5:]}"
    if check_id.startswith(HACKABLE_PREFIX):
        name = check_id.removeprefix(HACKABLE_PREFIX)
        return f"the tests rewarded an exploit: {EXPLOIT_DESCRIPTIONS.get(name, name)}"
    if check_id.startswith(JUDGE_PREFIX):
        return f"the alignment judge failed the task on {check_id.removeprefix(JUDGE_PREFIX)}"
    return CHECK_DESCRIPTIONS.get(check_id, check_id)


class CheckResult(BaseModel):
    id: str
    passed: bool
    detail: str = ""


class TrialSummary(BaseModel):
    trial_name: str
    agent: str
    reward: float | None = None  # the scalar of rewards (verify.results.scalar_reward)
    rewards: dict[str, float] | None = None
    error: str | None = None
    phases: dict[str, float] = Field(default_factory=dict)
    commands: dict[str, float] = Field(default_factory=dict)  # the task's own commands (see TrialResult)


class ExploitResult(BaseModel):
    name: str
    ran: bool = False  # False: not applicable here (see note)
    reward: float | None = None
    note: str = ""


class MutantResult(BaseModel):
    path: str
    operator: str
    reward: float | None = None
    killed: bool


class CriterionResult(BaseModel):
    """One rubric criterion as the alignment judge answered it (roles/judge.py)."""

    id: str
    outcome: Literal["pass", "fail", "not_applicable"]
    explanation: str = ""


class JudgeSummary(BaseModel):
    """The alignment judge's answer on one task, as the validation report keeps it."""

    model: str = ""
    mode: Literal["advisory", "blocking"] = "advisory"
    criteria: list[CriterionResult] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)  # judge:<criterion> for each failed criterion
    error: str | None = None  # no usable answer: no flag, not a verdict on the task
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class AttemptReview(BaseModel):
    """A model's reading of one adversarial attempt: did it do the task, or game the tests?"""

    did_task: bool | None = None  # None: no usable answer
    explanation: str = ""


class AdversarialAttempt(BaseModel):
    trial_name: str
    reward: float | None = None
    error: str | None = None  # the attempt failed (model or sandbox): no reward, no verdict
    commands: int = 0  # commands it ran
    evidence: list[str] = Field(default_factory=list)  # rule signs of an exploit in its commands
    review: AttemptReview | None = None  # the judge's reading (only for a rewarded attempt, when a judge runs)
    confirmed: bool = False  # reward > 0 and (evidence or the review says it did not do the task)


class AdversarialReport(BaseModel):
    """The adversarial solver's K attempts on one task (``hackable:adversarial`` when one is confirmed)."""

    model: str = ""
    attempts: list[AdversarialAttempt] = Field(default_factory=list)

    @property
    def confirmed(self) -> list[AdversarialAttempt]:
        return [a for a in self.attempts if a.confirmed]


class ProbeReport(BaseModel):
    """What the quality probes did on one task (validate/probes.py, validate/model_probes.py)."""

    flags: list[str] = Field(default_factory=list)  # the probe checks that failed, and the judge's flags
    exploits: list[ExploitResult] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)  # graded files the reference solution wrote
    mutants: list[MutantResult] = Field(default_factory=list)
    mutation_score: float | None = None  # share of mutants the tests rejected
    test_runs: int = 0
    notes: list[str] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)  # exploits, reference, answer, mutation, judge, ...
    judge: JudgeSummary | None = None  # None: the judge did not run (probes.judge = "off")
    adversarial: AdversarialReport | None = None  # None: no adversarial attempt (probes.adversarial_attempts = 0)


class LintSummary(BaseModel):
    rule: str
    severity: str
    message: str


class ValidationReport(BaseModel):
    task_name: str
    task_path: str
    content_hash: str | None = None
    verdict: Verdict
    failed_checks: list[str] = Field(default_factory=list)
    checks: list[CheckResult] = Field(default_factory=list)
    lint: list[LintSummary] = Field(default_factory=list)
    error: str | None = None
    image: str | None = None
    trials: list[TrialSummary] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)  # lint, build, leakage, oracle, nop, probes, total
    probes: ProbeReport | None = None  # None: the probes did not run (off, or an earlier check failed)
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def is_valid(self) -> bool:
        return self.verdict == Verdict.VALID


class ValidationSummary(BaseModel):
    run_dir: str
    total: int
    by_verdict: dict[str, int]
    failed_checks: dict[str, int]
    wall_sec: float
    phase_sec: dict[str, float]
    tasks: dict[str, str]  # task path -> verdict
    probed: int = 0  # tasks the quality probes ran on
    hackable: int = 0  # ... that an exploit passed
    probe_flags: dict[str, int] = Field(default_factory=dict)  # failed probe check -> tasks
    mutation_score_mean: float | None = None


class ProbeBrief(BaseModel):
    """One task's probe result without its detail or timings: what the counts below need."""

    probed: bool = False  # False: the probes did not run (off, an earlier check failed, a multi-step task)
    flags: list[str] = Field(default_factory=list)
    mutation_score: float | None = None

    @classmethod
    def of(cls, report: ValidationReport) -> ProbeBrief:
        p = report.probes
        return cls() if p is None else cls(probed=True, flags=list(p.flags), mutation_score=p.mutation_score)


class ProbeCounts(BaseModel):
    """The quality probes over a set of validated tasks (a flywheel round, a pool): how many were probed, how
    many an exploit passed, and how many tasks each probe flagged. ``summary.json`` holds the same per
    validation run (``ValidationSummary.probed``, ``hackable``, ``probe_flags``)."""

    validated: int = 0  # tasks counted (each with a validation report)
    probed: int = 0  # ... that the probes ran on
    hackable: int = 0  # ... probed ones that an exploit passed
    flags: dict[str, int] = Field(default_factory=dict)  # failed probe check -> tasks
    mutation_score_mean: float | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def hackable_share(self) -> float | None:
        """Hackable among the probed; None when none was probed (unknown, not 0)."""
        return self.hackable / self.probed if self.probed else None


def probe_counts(briefs: Iterable[ProbeBrief]) -> ProbeCounts:
    done = list(briefs)
    probed = [b for b in done if b.probed]
    scores = [b.mutation_score for b in probed if b.mutation_score is not None]
    flags: Counter[str] = Counter(f for b in probed for f in b.flags)
    return ProbeCounts(
        validated=len(done),
        probed=len(probed),
        hackable=sum(any(f.startswith(HACKABLE_PREFIX) for f in b.flags) for b in probed),
        flags=dict(sorted(flags.items())),
        mutation_score_mean=round(sum(scores) / len(scores), 3) if scores else None,
    )
