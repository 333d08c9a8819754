"""Multi-step tasks as Harbor 0.26 runs them: each ``[[steps]]`` entry seen as a task of its own.

A step's view is the task with the step's instruction, solution, tests and settings, so the oracle, the solver
and the verifier run a step exactly as they run a single-step task. Harbor's rules, read from its trial code:

- instruction: ``steps/<name>/instruction.md`` (the root instruction.md is not used);
- solution: ``steps/<name>/solution/`` when that dir exists, else the task's ``solution/``;
- tests: the task's ``tests/`` and then ``steps/<name>/tests/`` uploaded over it to ``/tests`` (a step's test.sh
  replaces the task's, which is the fallback);
- ``steps/<name>/workdir/`` is copied into the container's working dir before the step, and its ``setup.sh``,
  if any, runs there (a failing one ends the trial: see ``verify/steps.py``);
- agent timeout and user, verifier user: the step's, else the task's; verifier env: the task's with the step's
  over it; verifier timeout: the step's ``[steps.verifier] timeout_sec``, else Harbor's default of 600 s (Harbor
  does not fall back to the task's ``[verifier] timeout_sec`` here);
- ``min_reward`` (a number gates the ``reward`` key, a table each named key; a missing key counts as -inf):
  a step below it ends the trial; later steps do not run and do not count;
- ``[[verifier.collect]]`` hooks: the task's, then the step's, after the step's agent phase;
  ``[steps.healthcheck]`` runs after the step's setup, before its agent (the task's runs once, at the start);
- ``multi_step_reward_strategy``: ``mean`` (default) is the per-key mean over the steps that produced a reward
  (a key a step lacks counts 0 there); ``final`` is the last run step's rewards as they are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from autoenvscaling.tasks.config import StepConfig, TaskAgentConfig, TaskConfig, VerifierConfig
from autoenvscaling.tasks.model import Task
from autoenvscaling.tasks.paths import TaskPaths

HARBOR_STEP_VERIFIER_TIMEOUT_SEC = 600.0


@dataclass(frozen=True)
class StepPaths(TaskPaths):
    """A task dir seen from one step: ``steps/<step>/`` files first, the task's as Harbor's fallbacks."""

    step: str = ""

    @property
    def step_dir(self) -> Path:
        return self.steps_dir / self.step

    @property
    def instruction(self) -> Path:
        return self.step_dir / "instruction.md"

    @property
    def solution_dir(self) -> Path:
        own = self.step_dir / "solution"
        return own if own.is_dir() else self.root / "solution"

    @property
    def test_dirs(self) -> list[Path]:
        return [d for d in (self.root / "tests", self.step_dir / "tests") if d.is_dir()]

    @property
    def workdir_dir(self) -> Path:
        return self.step_dir / "workdir"

    @property
    def setup_script(self) -> Path:
        return self.workdir_dir / "setup.sh"


def _step_agent(task: TaskAgentConfig, step: TaskAgentConfig | None) -> TaskAgentConfig:
    if step is None:
        return task
    update: dict[str, object] = {}
    if "timeout_sec" in step.model_fields_set:
        update["timeout_sec"] = step.timeout_sec
    if step.user is not None:
        update["user"] = step.user
    return task.model_copy(update=update)


def _step_verifier(task: VerifierConfig, step: VerifierConfig | None) -> VerifierConfig:
    step = step or VerifierConfig()
    update: dict[str, object] = {
        "timeout_sec": step.timeout_sec if "timeout_sec" in step.model_fields_set else HARBOR_STEP_VERIFIER_TIMEOUT_SEC,
        "env": {**task.env, **step.env},
        "user": step.user if step.user is not None else task.user,
        "collect": [*task.collect, *step.collect],
    }
    if "environment_mode" in step.model_fields_set:
        update["environment_mode"] = step.environment_mode
    return task.model_copy(update=update)


def step_config(config: TaskConfig, step: StepConfig) -> TaskConfig:
    """The settings one step runs with (a single-step config: its ``steps`` list is empty)."""
    return config.model_copy(
        update={
            "agent": _step_agent(config.agent, step.agent),
            "verifier": _step_verifier(config.verifier, step.verifier),
            "artifacts": [*config.artifacts, *step.artifacts],
            "steps": [],
        }
    )


def step_view(task: Task, step: StepConfig) -> Task:
    """The task as one step sees it (read the step's instruction; raises OSError when it cannot be read)."""
    paths = StepPaths(task.paths.root, step=step.name)
    instruction = paths.instruction.read_text(encoding="utf-8")
    return replace(task, paths=paths, config=step_config(task.config, step), instruction=instruction)


def min_reward_failure(rewards: Mapping[str, float] | None, min_reward: float | Mapping[str, float]) -> str | None:
    """Why a step's rewards miss its ``min_reward`` (a missing reward or key counts as -inf), or None."""
    thresholds = {"reward": float(min_reward)} if isinstance(min_reward, int | float) else dict(min_reward)
    for key, threshold in thresholds.items():
        actual = rewards.get(key, -math.inf) if rewards else -math.inf
        if actual < threshold:
            return f"{key} = {actual:g} is below min_reward {threshold:g}"
    return None


def combine_step_rewards(strategy: str | None, per_step: Sequence[Mapping[str, float]]) -> dict[str, float] | None:
    """The trial's rewards from the rewards of the steps that ran, in order (Harbor's mean or final)."""
    if not per_step:
        return None
    if strategy == "final":
        return dict(per_step[-1])
    keys = sorted({k for rewards in per_step for k in rewards})
    if not keys:
        return None
    return {k: sum(rewards.get(k, 0.0) for rewards in per_step) / len(per_step) for k in keys}
