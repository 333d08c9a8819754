"""Verifier errors: the grading could not produce a reward. These are errors, never a reward of 0."""

from __future__ import annotations

from autoenvscaling.errors import AutoEnvError


class VerifierError(AutoEnvError):
    """No usable reward. ``check_id`` names the cause in validator terms."""

    check_id = "verifier-error"


class RewardMissingError(VerifierError):
    check_id = "reward-missing"


class RewardInvalidError(VerifierError):
    check_id = "reward-invalid"


class VerifierTimeoutError(VerifierError):
    check_id = "verifier-timeout"


class AgentTimeoutError(AutoEnvError):
    """The agent phase ran past ``[agent].timeout_sec``. The verifier still runs (Harbor semantics)."""


class TrialWatchdogError(VerifierError):
    """A phase of the trial outlived its declared time limit plus a grace period: the watchdog removed its sandbox."""

    check_id = "trial-watchdog"


class StepSetupError(VerifierError):
    """A step of a multi-step task could not be set up (its workdir/setup.sh failed, its instruction is unreadable):
    the task's fault, and the trial has no reward."""

    check_id = "step-setup"


class HealthcheckError(VerifierError):
    """The task's ``healthcheck`` never passed: its environment did not become ready (the task's fault)."""

    check_id = "healthcheck"
