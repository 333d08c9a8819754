"""Per-turn overhead of the agent loop, model time excluded: parsing, the sandbox round trip of a trivial
command, rendering, history and the trajectory write (a full atomic rewrite of trajectory.json each turn).

    python benchmarks/agent_overhead.py [--turns 50] [--runs 3] [--format bash_block] [--json out.json]

The model is the scripted model (one ```bash block per reply). Sandboxes: ``fake`` (in-memory; the loop's own
cost), and ``docker`` (autoenv/terminal:latest, when the engine and image are there; adds the real command
channel). Target: median <= 10 ms per turn.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from autoenvscaling.agent import Agent, AgentConfig, TrajectoryRecorder
from autoenvscaling.agent.actions import Action
from autoenvscaling.llm.base import Message, ModelResponse, Sampling, ToolSpec
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.sandbox.base import ExecResult, Sandbox, SandboxSpec
from autoenvscaling.sandbox.fake import FakeBackend

TERMINAL_IMAGE = "autoenv/terminal:latest"
TARGET_MEDIAN_MS = 10.0
REPLIES = {
    "bash_block": "Checking the next file.\n\n```bash\necho turn {n} > out.txt\n```",
    "json": '{{"thought": "next", "action": "bash", "command": "echo turn {n} > out.txt"}}',
    "tool_calls": '<tool_call>{{"name": "bash", "arguments": {{"command": "echo turn {n} > out.txt"}}}}</tool_call>',
}


class TimedModel(ScriptedModel):
    """The scripted model, keeping how long each call took so it can be subtracted."""

    def __init__(self, reply: str) -> None:
        super().__init__(responder=lambda msgs: reply.format(n=len(msgs)))
        self.seconds: list[float] = []

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: Sampling | None = None,
    ) -> ModelResponse:
        started = time.perf_counter()
        try:
            return super().complete(messages, tools=tools, response_format=response_format)
        finally:
            self.seconds.append(time.perf_counter() - started)


class TimedAgent(Agent):
    """Times each step and its parts."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.step_sec: list[float] = []
        self.exec_sec: list[float] = []
        self.write_sec: list[float] = []

    def step(self) -> None:
        started = time.perf_counter()
        try:
            super().step()
        finally:
            self.step_sec.append(time.perf_counter() - started)

    def execute(self, action: Action) -> ExecResult:
        started = time.perf_counter()
        try:
            return super().execute(action)
        finally:
            self.exec_sec.append(time.perf_counter() - started)

    def record(self, *args: Any, **kwargs: Any) -> None:
        started = time.perf_counter()
        try:
            super().record(*args, **kwargs)
        finally:
            self.write_sec.append(time.perf_counter() - started)


@contextlib.contextmanager
def open_sandbox(kind: str) -> Iterator[Sandbox]:
    spec = SandboxSpec(image=TERMINAL_IMAGE, name_hint="agent-bench", workdir="/tmp", network=False)
    if kind == "fake":
        with FakeBackend().create(spec) as sb:
            yield sb
        return
    from autoenvscaling.sandbox.docker import DockerBackend  # the docker SDK only when asked for

    backend = DockerBackend()
    try:
        with backend.create(spec) as sb:
            yield sb
    finally:
        backend.client.close()


def docker_available() -> bool:
    try:
        from autoenvscaling.sandbox.docker import DockerBackend

        backend = DockerBackend()
        try:
            return backend.image_exists(TERMINAL_IMAGE)
        finally:
            backend.client.close()
    except Exception:  # no engine, no SDK, no image: the docker row is skipped
        return False


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(kind: str, fmt: str, turns: int, runs: int) -> dict[str, Any]:
    overhead: list[float] = []
    loop: list[float] = []
    execs: list[float] = []
    writes: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, open_sandbox(kind) as sb:
        for run in range(runs):
            model = TimedModel(REPLIES[fmt])
            recorder = TrajectoryRecorder(Path(tmp) / f"run{run}" / "trajectory.json")
            config = AgentConfig(action_format=fmt, max_turns=turns)
            agent = TimedAgent(model, sb, config, recorder)
            result = agent.run("Write the turn number to out.txt, again and again.")
            assert result.exit_reason == "max_turns", result
            # The last step only checks the limit; it has no model call.
            turn_sec = [s - m for s, m in zip(agent.step_sec, model.seconds, strict=False)]
            overhead += turn_sec
            loop += [t - e for t, e in zip(turn_sec, agent.exec_sec, strict=True)]
            execs += agent.exec_sec
            writes += agent.write_sec
    ms = 1000.0
    return {
        "sandbox": kind,
        "format": fmt,
        "turns": len(overhead),
        "median_ms": statistics.median(overhead) * ms,
        "p99_ms": pct(overhead, 0.99) * ms,
        "loop_median_ms": statistics.median(loop) * ms,
        "loop_p99_ms": pct(loop, 0.99) * ms,
        "exec_median_ms": statistics.median(execs) * ms,
        "write_median_ms": statistics.median(writes) * ms,
        "write_p99_ms": pct(writes, 0.99) * ms,
        "target_met": statistics.median(overhead) * ms <= TARGET_MEDIAN_MS,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, default=50, help="turns per agent run (trajectory grows each turn)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--format", choices=sorted(REPLIES), nargs="+", default=["bash_block"])
    ap.add_argument("--sandbox", choices=["fake", "docker"], nargs="+", default=["fake", "docker"])
    ap.add_argument("--json", type=Path, help="also write the rows to this file")
    args = ap.parse_args()

    rows = []
    for kind in args.sandbox:
        if kind == "docker" and not docker_available():
            print(f"docker: skipped (no engine or no {TERMINAL_IMAGE})")
            continue
        for fmt in args.format:
            rows.append(measure(kind, fmt, args.turns, args.runs))

    head = (
        f"{'sandbox':8} {'format':11} {'turns':>5} {'median ms':>10} {'p99 ms':>8} "
        f"{'exec ms':>8} {'loop ms':>8} {'loop p99':>9} {'write ms':>9}"
    )
    print(head)
    for r in rows:
        print(
            f"{r['sandbox']:8} {r['format']:11} {r['turns']:5d} {r['median_ms']:10.2f} {r['p99_ms']:8.2f} "
            f"{r['exec_median_ms']:8.2f} {r['loop_median_ms']:8.2f} {r['loop_p99_ms']:9.2f} "
            f"{r['write_median_ms']:9.2f}" + ("" if r["target_met"] else "  (> target)")
        )
    print(
        "median/p99 = per-turn time minus model time (exec = sandbox round trip of a trivial command, "
        f"loop = the rest, write = trajectory step + write); target median <= {TARGET_MEDIAN_MS:.0f} ms"
    )
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "turns_per_run": args.turns, "runs": args.runs}, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
