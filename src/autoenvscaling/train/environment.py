"""TRL's environment contract over our sandbox: ``GRPOTrainer(environment_factory=TaskEnvFactory(...))``.

TRL (1.16) makes one instance per concurrent rollout, keeps it, and drives it once per batch:
``reset(**row)`` (the dataset row's columns; the returned instruction is appended to the prompt), then the
model's tool calls (every public method is a tool: here only ``bash``), then ``get_reward()``.

One rollout is one trial of ``verify.trial.TrialRunner`` run in a worker thread whose agent is steered from
outside: ``bash`` hands a command to that thread and waits for its output; ``get_reward`` ends the agent phase,
and the trial then grades with Harbor's semantics (tests copied in only now, shared or separate verifier,
artifacts, network policy, watchdog) and removes its containers. So a training rollout is graded exactly as a
solve or calibration attempt is, and leaves the same ``result.json``. A separate verifier's container starts
while the rollout's agent phase runs, where that is safe (``verify/trial.py``), so ``get_reward`` does not wait
for it.

Teardown never depends on TRL calling us back: ``reset`` aborts the instance's previous rollout if it was never
scored; ``TaskEnvFactory.close`` (and an exit hook) abort every rollout still open; an aborted trial removes
its containers (an early-started verifier's too) in ``TrialRunner``'s own ``finally``; and every container
carries the run id for the janitor.
A rollout whose trial failed (build, start, verifier) scores ``None``: TRL leaves it out of the group baseline
and gives it no advantage, so an infrastructure failure is never a reward of 0.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import queue
import re
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self

from pydantic import BaseModel, Field

from autoenvscaling.agent.loop import truncate_output
from autoenvscaling.errors import UserInputError
from autoenvscaling.sandbox.base import ExecResult, Sandbox, SandboxBackend
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.model import load_task
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.errors import AgentTimeoutError
from autoenvscaling.verify.results import AgentContext, AgentInfo, TrialResult
from autoenvscaling.verify.trial import TrialOptions, TrialRunner

DEFAULT_SUFFIX = (
    "\n\nYou work in the task's Linux container through the `bash` tool. Each call runs one command line in a "
    "fresh bash shell in the task's working directory (so `cd` and `export` do not carry over; chain commands "
    "with `&&`) and returns its output and exit code. When the task is done, answer without a tool call."
)


class RolloutSettings(BaseModel):
    """How a training rollout runs commands (the task's own limits still apply to build and verifier)."""

    command_timeout_sec: float = Field(default=120.0, gt=0, description="per bash call")
    output_chars: int = Field(default=4000, ge=200, description="output shown to the model, head and tail kept")
    rollout_timeout_sec: float = Field(
        default=3600.0,
        gt=0,
        description="wall-clock guard on one rollout's agent phase. Not [agent].timeout_sec: under batched "
        "generation a rollout waits for the whole batch's tokens, which are not its agent's time",
    )
    prompt_suffix: str = Field(default=DEFAULT_SUFFIX, description="appended to the task's instruction")


class RolloutAbortedError(RuntimeError):
    """The rollout was abandoned before it was scored (a new reset, close, or exit)."""


_FINISH = "finish"
_ABORT = "abort"


@dataclass
class _Command:
    text: str
    timeout: float


@dataclass
class _Channel:
    inbox: queue.Queue[_Command | str] = field(default_factory=queue.Queue)
    outbox: queue.Queue[ExecResult] = field(default_factory=queue.Queue)
    ready: threading.Event = field(default_factory=threading.Event)


class _SteeredAgent:
    """The agent phase of a rollout trial: runs the commands it is handed until told to finish or abort."""

    info = AgentInfo(name="trl-policy", version="1")

    def __init__(self, channel: _Channel) -> None:
        self.channel = channel

    def setup(self, sandbox: Sandbox, task: Task) -> None:
        self.channel.ready.set()

    def run(self, sandbox: Sandbox, task: Task, agent_dir: Path, timeout_sec: float | None) -> AgentContext:
        deadline = time.monotonic() + (timeout_sec if timeout_sec is not None else float("inf"))
        count, command_sec = 0, 0.0
        with (agent_dir / "commands.jsonl").open("w", encoding="utf-8") as log:
            while True:
                remaining = deadline - time.monotonic()
                try:
                    item = self.channel.inbox.get(timeout=None if remaining == float("inf") else max(remaining, 0))
                except queue.Empty:
                    raise AgentTimeoutError(f"the rollout ran past {timeout_sec:g} s") from None
                if item == _ABORT:
                    raise RolloutAbortedError("the rollout was abandoned before it was scored")
                if not isinstance(item, _Command):
                    return AgentContext(metadata={"commands": count, "command_sec": command_sec})
                result = sandbox.exec(item.text, timeout=min(item.timeout, max(remaining, 1.0)))
                count, command_sec = count + 1, command_sec + result.duration_sec
                record = {"command": item.text, "exit_code": result.exit_code,
                          "duration_sec": result.duration_sec, "timed_out": result.timed_out}  # fmt: skip
                log.write(json.dumps(record) + "\n")
                log.flush()
                self.channel.outbox.put(result)


_LIVE: weakref.WeakSet[SandboxTaskEnv] = weakref.WeakSet()
_HOOKED = threading.Lock()
_hooked = False


def _abort_live() -> None:
    for env in list(_LIVE):
        env._end(abort=True)


def _register_exit_hook() -> None:
    global _hooked
    with _HOOKED:
        if not _hooked:
            atexit.register(_abort_live)  # daemon trial threads still run when atexit hooks do
            _hooked = True


class SandboxTaskEnv:
    """One rollout at a time in one task's container. Made by ``TaskEnvFactory``; TRL calls the public methods."""

    def __init__(self, factory: TaskEnvFactory) -> None:
        self._factory = factory
        self._settings = factory.settings
        self._channel = _Channel()
        self._thread: threading.Thread | None = None
        self._result: TrialResult | None = None
        self._trial_dir: Path | None = None
        self._scored = False
        self._finished: TrialResult | None = None
        _LIVE.add(self)
        _register_exit_hook()

    def reset(self, task_dir: str | None = None, **row: object) -> str:
        """Start the row's task in a fresh container; return its instruction (TRL appends it to the prompt)."""
        self._end(abort=True)
        if not task_dir:
            raise UserInputError("reset: the dataset row has no task_dir column (see train.rows.load_rows)")
        task = self._factory.task(task_dir)
        self._channel, self._result, self._scored = _Channel(), None, False
        self._trial_dir = self._factory.next_trial_dir(task)
        agent = _SteeredAgent(self._channel)
        runner, timeout = self._factory.runner, self._settings.rollout_timeout_sec

        def trial() -> None:
            assert self._trial_dir is not None
            self._result = runner.run(task, agent, self._trial_dir, agent_timeout_sec=timeout)

        self._thread = threading.Thread(target=trial, name=f"rollout-{self._trial_dir.name}", daemon=True)
        self._thread.start()  # the container starts while TRL generates the first turn
        return task.instruction.rstrip() + self._settings.prompt_suffix

    def bash(self, command: str) -> str:
        """Run a shell command in the task's container.

        Args:
            command: The command line, run by a fresh bash in the task's working directory (as the solver's do).

        Returns:
            The command's output (stdout, then stderr; long output is cut in the middle) and its exit code.
        """
        if self._thread is None or self._scored:
            raise RuntimeError("no task is running: the rollout has not started or was already scored")
        if not self._started():
            raise RuntimeError(self._failure("the container did not start"))
        self._channel.inbox.put(_Command(command, self._settings.command_timeout_sec))
        result = self._take_result()
        limit = self._settings.output_chars
        text = truncate_output(result.output, limit // 2, limit // 2)
        status = f"[timed out after {self._settings.command_timeout_sec:g} s]" if result.timed_out else ""
        return f"{text.rstrip()}\n[exit code {result.exit_code}]{status}".lstrip("\n")

    def get_reward(self) -> float | None:
        """End the rollout, run the task's tests, and return the reward (None when the trial failed: an error)."""
        if self._thread is None:
            return None
        self._end(abort=False)
        result = self._result
        if result is None or result.is_error:
            return None
        return result.reward

    @property
    def trial_result(self) -> TrialResult | None:
        """The trial record of the last rollout that ended (scored or aborted)."""
        return self._finished

    # -- internals (private: TRL exposes every public method as a tool) -------------------------------------

    def _started(self) -> bool:
        """Wait until the agent phase began; False when the trial ended first (it failed to start)."""
        assert self._thread is not None
        while not self._channel.ready.wait(timeout=0.5):
            if not self._thread.is_alive():
                return self._channel.ready.is_set()
        return True

    def _take_result(self) -> ExecResult:
        assert self._thread is not None
        while True:
            try:
                return self._channel.outbox.get(timeout=0.5)
            except queue.Empty:
                if not self._thread.is_alive():
                    raise RuntimeError(self._failure("the container went away")) from None

    def _failure(self, default: str) -> str:
        if self._thread is not None:
            self._thread.join(timeout=60)
        info = self._result.exception_info if self._result is not None else None
        if info is None:
            return default
        return f"{default}: {info.exception_type}: {info.exception_message}"

    def _end(self, *, abort: bool) -> None:
        """Finish (grade) or abort the current rollout and wait until its containers are gone."""
        thread = self._thread
        if thread is None or self._scored:
            return
        self._scored = True
        self._channel.inbox.put(_ABORT if abort else _FINISH)
        thread.join()
        self._finished = self._result


_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


class TaskEnvFactory:
    """``environment_factory=`` for TRL: every call makes one ``SandboxTaskEnv`` sharing one trial runner.

    ``trials_dir`` receives one trial dir per rollout (``result.json``, ``agent/commands.jsonl``, ``verifier/``).
    Use it as a context manager (or call ``close``) so rollouts left open by a failed step are removed.
    """

    tool_names = ("bash",)  # the environment's tool methods, as TRL offers them to the model

    def __init__(
        self,
        backend: SandboxBackend,
        trials_dir: Path,
        *,
        settings: RolloutSettings | None = None,
        run_id: str | None = None,
        image_aliases: dict[str, str] | None = None,
        options: TrialOptions | None = None,
    ) -> None:
        self.settings = settings or RolloutSettings()
        self.trials_dir = trials_dir
        self.runner = TrialRunner(
            backend, EnvironmentBuilder(backend, image_aliases), run_id, prewarm=False, options=options
        )
        self.envs: list[SandboxTaskEnv] = []
        self._tasks: dict[str, Task] = {}
        self._lock = threading.Lock()
        self._count = itertools.count(1)
        self._tag = uuid.uuid4().hex[:6]

    def __call__(self) -> SandboxTaskEnv:
        env = SandboxTaskEnv(self)
        with self._lock:
            self.envs.append(env)
        return env

    def task(self, task_dir: str) -> Task:
        with self._lock:
            task = self._tasks.get(task_dir)
            if task is None:
                task = self._tasks[task_dir] = load_task(task_dir)
        if task.config.is_multi_step:
            raise UserInputError(f"{task_dir}: multi-step tasks are not trained on (one reward per rollout)")
        return task

    def next_trial_dir(self, task: Task) -> Path:
        with self._lock:
            n = next(self._count)
        name = _SLUG.sub("-", task.name).strip("-.") or "task"
        return self.trials_dir / f"{name}__{self._tag}-{n:05d}"

    def close(self) -> None:
        """Abort every rollout still open (its containers are removed) and release the runner."""
        with self._lock:
            envs = list(self.envs)
        for env in envs:
            with contextlib.suppress(Exception):
                env._end(abort=True)
        self.runner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
