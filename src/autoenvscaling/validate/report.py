"""Validation records: one ``ValidationReport`` per task (a line of results.jsonl) and the run summary."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field


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
}


def describe_check(check_id: str) -> str:
    if check_id.startswith("lint:"):
        return f"lint rule {check_id[5:]}"
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
    timings: dict[str, float] = Field(default_factory=dict)  # lint, build, leakage, oracle, nop, total
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
