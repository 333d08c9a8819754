"""A multi-step trial: the steps of a task, in order, in one sandbox, each with its agent phase and its tests.

Harbor 0.26's semantics (the rules per step are in ``tasks/steps.py``); per step, in the trial's container:

1. clear what the previous step left for the harness (``/logs/agent``, ``/logs/verifier``, ``/tests``);
2. copy ``steps/<name>/workdir/`` into the working dir and run its ``setup.sh`` as the step's agent user, then
   the step's healthcheck;
3. the agent phase with the step's instruction (the oracle runs the step's ``solve.sh``);
4. the tests (task tests + step tests): in shared mode in the same container, after every agent-phase process is
   gone; in separate mode in a fresh container of the image holding the task's and the step's artifacts (the
   agent's container stays up for the next step);
5. stop when the step produced no reward or missed its ``min_reward``.

Outputs go to ``<trial>/steps/<name>/{agent,verifier,artifacts}`` as in Harbor, and ``result.json`` gets one
``step_results`` entry per step that ran; its ``verifier_result`` combines them (mean or final).

Where a step fails, the trial is recorded as Harbor would grade it, with one deliberate difference: a failing
``setup.sh`` is the task's fault and makes the trial an error (``StepSetupError``); Harbor scores the steps
before it.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from autoenvscaling.sandbox.base import Sandbox
from autoenvscaling.tasks import StepConfig, Task
from autoenvscaling.tasks.paths import CONTAINER_LOGS_AGENT, CONTAINER_LOGS_VERIFIER, CONTAINER_TESTS_DIR
from autoenvscaling.tasks.steps import StepPaths, combine_step_rewards, min_reward_failure, step_view
from autoenvscaling.verify.errors import HealthcheckError, StepSetupError, VerifierError
from autoenvscaling.verify.hooks import run_healthcheck
from autoenvscaling.verify.paths import TrialPaths
from autoenvscaling.verify.processes import agent_phase_mark
from autoenvscaling.verify.results import ExceptionInfo, StepResult, TrialResult, VerifierResult
from autoenvscaling.verify.trial_agents import TrialAgent

if TYPE_CHECKING:
    from autoenvscaling.verify.trial import TrialRunner

_RESET = (
    f"rm -rf {CONTAINER_TESTS_DIR} {CONTAINER_LOGS_AGENT} {CONTAINER_LOGS_VERIFIER}"
    f" && mkdir -p {CONTAINER_LOGS_AGENT} {CONTAINER_LOGS_VERIFIER} && chmod 0777 {CONTAINER_LOGS_AGENT}"
)


def _prepare_step(view: Task, step: StepConfig, sandbox: Sandbox) -> None:
    """Step 2: the step's workdir files, its setup.sh (the task's own code: a failure is the task's fault), then
    its healthcheck."""
    paths = view.paths
    assert isinstance(paths, StepPaths)
    user = None if view.config.agent.user is None else str(view.config.agent.user)
    workdir = sandbox.exec("pwd", timeout=30, user=user).stdout.strip() or "/"
    if paths.workdir_dir.is_dir():
        sandbox.upload(paths.workdir_dir, workdir)
        if paths.setup_script.is_file():
            _run_setup(view, sandbox, workdir, user)
    if step.healthcheck is not None:
        run_healthcheck(sandbox, step.healthcheck, what=f"step {step.name!r} healthcheck", user=user)


def _run_setup(view: Task, sandbox: Sandbox, workdir: str, user: str | None) -> None:
    paths = view.paths
    assert isinstance(paths, StepPaths)
    script = f"{workdir.rstrip('/')}/setup.sh"
    limit = view.config.agent.timeout_sec
    res = sandbox.exec(f"bash {shlex.quote(script)}", timeout=limit, user=user)
    if res.timed_out:
        raise StepSetupError(f"step {paths.step!r}: workdir/setup.sh ran past the step's agent timeout ({limit:g} s)")
    if not res.ok:
        tail = res.output.strip()[-300:]
        raise StepSetupError(f"step {paths.step!r}: workdir/setup.sh exited {res.exit_code}: {tail}")


def _run_step(
    runner: TrialRunner,
    cfg: StepConfig,
    view: Task,
    agent: TrialAgent,
    sandbox: Sandbox,
    paths: TrialPaths,
    step: StepResult,
    agent_timeout_sec: float | None,
    sandboxes: list[Sandbox],
    *,
    last: bool,
) -> None:
    try:
        _prepare_step(view, cfg, sandbox)
    except (StepSetupError, HealthcheckError) as e:
        step.exception_info = ExceptionInfo.from_exception(e)
        return
    mark = agent_phase_mark(sandbox)  # what setup.sh started belongs to the environment, not to the agent
    runner._agent_phases(view, agent, sandbox, paths, step, agent_timeout_sec, sandboxes)
    if step.exception_info is None or step.exception_info.exception_type == "AgentTimeoutError":
        try:
            runner._verify(view, sandbox, mark, paths, step, sandboxes, keep_agent=not last)
        except VerifierError as e:  # no reward from this step: Harbor stops here, and the trial has no valid reward
            step.exception_info = ExceptionInfo.from_exception(e)
        finally:
            for verifier_sandbox in sandboxes[1:]:  # a separate-mode verifier's container lives for one step
                verifier_sandbox.stop()
            del sandboxes[1:]


def run_steps(
    runner: TrialRunner,
    task: Task,
    agent: TrialAgent,
    sandbox: Sandbox,
    paths: TrialPaths,
    result: TrialResult,
    agent_timeout_sec: float | None,
    sandboxes: list[Sandbox],
) -> None:
    """Run every step of ``task`` in ``sandbox`` (already started) and record them on ``result``."""
    result.step_results = []
    rewards: list[dict[str, float]] = []
    for i, cfg in enumerate(task.config.steps):
        step = StepResult(step_name=cfg.name)
        result.step_results.append(step)
        if i > 0:
            sandbox.exec(_RESET, timeout=30, user="0")
        try:
            view = step_view(task, cfg)
        except OSError as e:
            raise StepSetupError(f"step {cfg.name!r}: cannot read its instruction.md: {e}") from None
        step_paths = TrialPaths(paths.root / "steps" / cfg.name).make()
        last = i == len(task.config.steps) - 1
        _run_step(runner, cfg, view, agent, sandbox, step_paths, step, agent_timeout_sec, sandboxes, last=last)
        for key, sec in step.command_seconds.items():
            result.command_seconds[key] = result.command_seconds.get(key, 0.0) + sec
        if step.verifier_result is None or step.verifier_result.rewards is None:
            result.exception_info = step.exception_info  # no reward from a step: none for the trial, as in Harbor
            return
        if step.exception_info is not None and result.exception_info is None:
            result.exception_info = step.exception_info  # a graded failure (agent timeout): the first is the trial's
        rewards.append(step.verifier_result.rewards)
        if cfg.min_reward is not None and min_reward_failure(step.verifier_result.rewards, cfg.min_reward):
            break
    combined = combine_step_rewards(task.config.multi_step_reward_strategy, rewards)
    result.verifier_result = None if combined is None else VerifierResult(rewards=combined)
