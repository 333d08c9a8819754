"""Ctrl-C ends a run promptly: the items running in the executor's threads stop at their next model call, instead
of the executor waiting out every remaining turn of their episodes; the interrupted item is never recorded."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from autoenvscaling.agent import Agent, AgentConfig, TrajectoryRecorder, read_trajectory
from autoenvscaling.execution.executors import LocalExecutor
from autoenvscaling.execution.rundir import ResultsLog
from autoenvscaling.execution.runner import ItemRunner
from autoenvscaling.llm.base import Message
from autoenvscaling.llm.scripted import ScriptedDelay, ScriptedModel
from autoenvscaling.sandbox.base import SandboxSpec
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.stopping import Interrupted, check_stop, clear_stop, request_stop, stop_requested

TURNS = 200  # an episode far longer than the test: 200 replies of 20 ms each


class Rec(BaseModel):
    key: str
    exit_reason: str = ""


def _long_episode(tmp_path: Path, started: threading.Event, outcome: list[str]) -> Rec:
    model = ScriptedModel([ScriptedDelay(0.02, f"Step {i}.\n\n```bash\necho {i}\n```") for i in range(TURNS)])
    recorder = TrajectoryRecorder(tmp_path / "trajectory.json")
    spec = SandboxSpec(image="autoenv/terminal:latest", name_hint="agent", workdir="/app")
    with FakeBackend().create(spec) as sandbox:
        agent = Agent(model, sandbox, AgentConfig(max_turns=TURNS), recorder)
        started.set()
        try:
            result = agent.run("Print numbers.")
        except Interrupted:
            outcome.append(f"interrupted after {len(model.calls)} calls")
            raise
    return Rec(key="long", exit_reason=result.exit_reason)


@pytest.mark.parametrize("where", ["waiting", "reporting"])
def test_an_interrupt_stops_the_running_episode_at_its_next_model_call(tmp_path: Path, where: str) -> None:
    """``waiting``: Ctrl-C lands while the executor waits for results; ``reporting``: while the caller's loop
    handles one (its progress callback)."""
    started = threading.Event()
    outcome: list[str] = []
    log = tmp_path / "results.jsonl"
    runner = ItemRunner(ResultsLog(log, Rec), item_key=str, result_key=lambda r: r.key, executor=LocalExecutor(),
                        concurrency=2)  # fmt: skip
    runner.resume(False)

    def work(item: str) -> Rec:
        if item == "long":
            return _long_episode(tmp_path, started, outcome)
        started.wait(10)  # the long episode is under way
        if where == "waiting":
            raise KeyboardInterrupt  # stands for the signal: it reaches the executor's wait through this result
        return Rec(key="short")

    def on_done(_r: Rec) -> None:
        raise KeyboardInterrupt  # Ctrl-C while the caller reports a result

    with pytest.raises(KeyboardInterrupt):
        runner.run(["long", "short"], work, on_done=on_done)
    (said,) = outcome
    calls = int(said.split()[2])
    assert calls < 20, said  # without the stop request it ran all 200 turns (4 s) before the run could end
    assert not stop_requested()  # cleared once the executor's threads were done: a next run is not stopped
    recorded = ResultsLog(log, Rec).load() if log.exists() else {}
    assert "long" not in recorded  # the interrupted episode left no result
    steps = read_trajectory(tmp_path / "trajectory.json").steps
    assert steps and len(steps) < 40  # its trajectory was closed, with the turns it made


def test_a_model_call_after_a_stop_request_raises_interrupted_and_nothing_is_sent() -> None:
    model = ScriptedModel(["never sent"])
    request_stop()
    try:
        with pytest.raises(Interrupted):
            model.complete([Message(role="user", content="hi")])
        with pytest.raises(Interrupted):
            check_stop()
    finally:
        clear_stop()
    assert model.calls == []
    assert model.complete([Message(role="user", content="hi")]).content == "never sent"


def test_a_second_interrupt_while_the_executor_waits_leaves_the_stop_request_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first Ctrl-C asks the running items to stop and waits for them; a second one ends that wait. The items
    still running must stop all the same: the request stays set (it was cleared, and they ran on)."""
    from concurrent.futures import ThreadPoolExecutor

    real = ThreadPoolExecutor.shutdown
    waits: list[bool] = []

    def shutdown(self: ThreadPoolExecutor, wait: bool = True, *, cancel_futures: bool = False) -> None:
        waits.append(wait)
        real(self, wait=False, cancel_futures=cancel_futures)
        raise KeyboardInterrupt  # the second Ctrl-C, during the wait

    monkeypatch.setattr(ThreadPoolExecutor, "shutdown", shutdown)

    def work(item: int) -> int:
        raise KeyboardInterrupt  # stands for the first Ctrl-C

    try:
        with pytest.raises(KeyboardInterrupt):
            list(LocalExecutor().map_unordered(work, [1], 1))
        assert waits == [True] and stop_requested()
    finally:
        clear_stop()
