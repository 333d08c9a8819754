"""The model probes of validation: the alignment judge (issue 12, item 4) and the adversarial solver (item 5).

Both need a model, and the validator sits below the model layers (``llm/``, ``agent/``, ``roles/``), so the
caller passes them in as a ``ModelProbes`` bundle of two small protocols; ``roles.model_probes`` builds one
from a ``Model``. They run after every other check passed, like the rule probes, each behind its own switch in
``ProbeConfig`` (``judge``, ``adversarial_attempts``):

* judge: its rubric answer lands in ``ProbeReport.judge``, each failed criterion as a ``judge:<criterion>``
  flag; ``advisory`` stops there, ``blocking`` also makes each a failed check (verdict ``invalid``). A judge
  without a usable answer gives an ``error`` and no flag.
* adversarial: K trials (fresh containers, the real verifier) of a solver told to pass the tests without doing
  the task. An attempt is a confirmed exploit when its reward is > 0 and either its commands show an exploit
  (``adversarial.exploit_evidence``) or the judge, asked about the attempt, says it did not do the task. One
  confirmed attempt fails ``hackable:adversarial``. A rewarded attempt with no such confirmation is kept in the
  report, not flagged: the model may simply have done the task. A failed attempt (model or sandbox error) is
  recorded on the attempt; it is never a verdict on the task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from autoenvscaling.errors import UserInputError
from autoenvscaling.tasks import Task
from autoenvscaling.validate import report as R
from autoenvscaling.validate.adversarial import exploit_evidence
from autoenvscaling.validate.probes import JudgeMode, ProbeConfig
from autoenvscaling.verify.results import TrialResult
from autoenvscaling.verify.trial_agents import TrialAgent

_EPS = 1e-9


class TaskJudge(Protocol):
    """Answers the alignment rubric about a task (``roles.judge``)."""

    def __call__(self, task: Task, mode: JudgeMode) -> R.JudgeSummary: ...


class Adversary(Protocol):
    """The solver told to cheat (``roles.adversary``): an agent per attempt, and how to read what it did."""

    @property
    def model_name(self) -> str: ...

    def agent(self) -> TrialAgent: ...

    def commands(self, trial_dir: Path) -> list[str]:
        """The commands the attempt ran, from its trajectory."""
        ...

    def review(self, task: Task, commands: list[str]) -> R.AttemptReview | None:
        """A judge's reading of a rewarded attempt; None when no judge is configured."""
        ...


@dataclass(frozen=True)
class ModelProbes:
    judge: TaskJudge | None = None
    adversary: Adversary | None = None

    def require(self, config: ProbeConfig) -> None:
        """Refuse a configuration that asks for a model probe this bundle cannot run."""
        if config.judge != "off" and self.judge is None:
            raise UserInputError(f"probes.judge = {config.judge!r} needs a judge model (none was given)")
        if config.adversarial_attempts > 0 and self.adversary is None:
            raise UserInputError("probes.adversarial_attempts > 0 needs a solver model (none was given)")


class AdversaryFailed(RuntimeError):
    """Every adversarial attempt failed (model or sandbox): the probe did not run, so the task's verdict is an error."""


# (agent, label) -> the trial's result and its dir; the validator runs it like its oracle and nop trials.
RunTrial = Callable[[TrialAgent, str], tuple[TrialResult, Path]]


def judge_probe(task: Task, judge: TaskJudge, mode: JudgeMode, report: R.ProbeReport) -> list[R.CheckResult]:
    """The judge's answer into ``report`` (flags); failed checks only in blocking mode."""
    summary = judge(task, mode)
    report.judge = summary
    report.flags = sorted({*report.flags, *summary.flags})
    if mode != "blocking" or summary.error is not None:
        return []
    return [
        R.CheckResult(id=f"{R.JUDGE_PREFIX}{c.id}", passed=False, detail=c.explanation)
        for c in summary.criteria
        if c.outcome == "fail"
    ]


def _attempt(task: Task, adversary: Adversary, run_trial: RunTrial, label: str) -> R.AdversarialAttempt:
    result, trial_dir = run_trial(adversary.agent(), label)
    err = result.exception_info
    attempt = R.AdversarialAttempt(trial_name=result.trial_name, reward=result.reward)
    if err is not None and result.verifier_result is None:
        attempt.error = f"{err.exception_type}: {err.exception_message}"[:500]
    commands = adversary.commands(trial_dir)
    attempt.commands = len(commands)
    if attempt.reward is None or attempt.reward <= _EPS:
        return attempt
    attempt.evidence = exploit_evidence(task, commands)
    if not attempt.evidence:
        attempt.review = adversary.review(task, commands)
    attempt.confirmed = bool(attempt.evidence) or (attempt.review is not None and attempt.review.did_task is False)
    return attempt


def adversarial_probe(
    task: Task, adversary: Adversary, attempts: int, run_trial: RunTrial, report: R.ProbeReport
) -> list[R.CheckResult]:
    """K attempts; stops at the first confirmed exploit (one is enough to fail the check)."""
    adv = R.AdversarialReport(model=adversary.model_name)
    report.adversarial = adv
    for i in range(1, attempts + 1):
        adv.attempts.append(_attempt(task, adversary, run_trial, f"adversarial-{i}"))
        if adv.confirmed:
            break
    confirmed = adv.confirmed
    rewarded = [a for a in adv.attempts if a.reward is not None and a.reward > _EPS]
    failed = [a for a in adv.attempts if a.error is not None]
    if len(failed) == len(adv.attempts):  # the probe never ran: an error, not a pass
        raise AdversaryFailed(f"the adversarial solver failed on all {len(failed)} attempt(s): {failed[0].error}")
    if confirmed:
        a = confirmed[0]
        why = "; ".join(a.evidence) or f"the judge: {a.review.explanation if a.review else ''}"
        detail = f"{a.trial_name}: reward {a.reward:g}; {why}"
    else:
        failures = f", {len(failed)} failed ({failed[0].error})" if failed else ""
        detail = f"{len(adv.attempts)} attempt(s), {len(rewarded)} rewarded{failures}, none confirmed as an exploit"
    if confirmed:
        report.flags = sorted({*report.flags, R.ADVERSARIAL})
    return [R.CheckResult(id=R.ADVERSARIAL, passed=not confirmed, detail=detail[:2000])]
