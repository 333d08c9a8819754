"""The task's own hooks around the agent phase, as Harbor 0.26 runs them in the main container.

- ``[environment.healthcheck]`` (and a step's ``[steps.healthcheck]``): Docker HEALTHCHECK semantics. The command
  runs until it exits 0; failures inside ``start_period_sec`` do not count (retried every
  ``start_interval_sec``), after it ``retries`` consecutive failures (``interval_sec`` apart) end the trial
  with ``HealthcheckError``: the task's environment never became ready, which is the task's fault here.
  The task's check runs as the image's user once the container is up; a step's as the step's agent user, after
  the step's setup.
- ``[[verifier.collect]]``: after the agent phase and before the artifacts are copied out, each command runs
  (as its ``user``, else the image's) under its ``timeout_sec``. Best effort, as in Harbor: a failing hook is
  noted in the trial and never ends it. Hooks for other compose services are refused (tasks/support.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from autoenvscaling.sandbox.base import Sandbox
from autoenvscaling.tasks.config import CollectHook, HealthcheckConfig
from autoenvscaling.verify.errors import HealthcheckError


def run_healthcheck(
    sandbox: Sandbox,
    check: HealthcheckConfig,
    *,
    what: str = "[environment.healthcheck]",
    user: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Run ``check`` until it passes; returns the number of attempts. Raises ``HealthcheckError``."""
    start_period_end = clock() + check.start_period_sec
    failures = attempts = 0
    while True:
        in_start_period = clock() < start_period_end
        res = sandbox.exec(check.command, timeout=check.timeout_sec, user=user)
        attempts += 1
        if res.ok:
            return attempts
        if in_start_period:
            sleep(check.start_interval_sec)
            continue
        failures += 1
        if failures >= check.retries:
            tail = res.output.strip()[-200:]
            how = "timed out" if res.timed_out else f"exit {res.exit_code}"
            raise HealthcheckError(
                f"{what} failed {failures} time(s) in a row ({how}: {tail!r}): {check.command!r}; "
                "the environment never became ready"
            )
        sleep(check.interval_sec)


def collect_limit(hooks: Sequence[CollectHook]) -> float:
    """The most time the hooks may take together (the agent phase's watchdog allows for it)."""
    return sum(h.timeout_sec for h in hooks)


def run_collect_hooks(sandbox: Sandbox, hooks: Sequence[CollectHook]) -> list[str]:
    """Run each main-service hook; returns one note per hook that failed (none stops the trial)."""
    notes: list[str] = []
    for hook in hooks:
        user = None if hook.user is None else str(hook.user)
        res = sandbox.exec(hook.command, timeout=hook.timeout_sec, user=user)  # a dead sandbox is not best effort
        if res.timed_out:
            notes.append(f"collect hook {hook.command!r} ran past {hook.timeout_sec:g} s")
        elif not res.ok:
            notes.append(f"collect hook {hook.command!r} exited {res.exit_code}: {res.output.strip()[-200:]}")
    return notes
