"""The solver digest: failed commands, error lines, where an attempt stopped, limits hit."""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.agent.trajectory import (
    AgentInfo,
    Observation,
    ObservationResult,
    ToolCall,
    TrajectoryRecorder,
)
from autoenvscaling.roles.proposer.digest import digest_trials, error_lines, find_trial_dirs, render_digest
from autoenvscaling.verify.results import AgentContext, TaskId, TrialResult, VerifierResult
from autoenvscaling.verify.results import AgentInfo as TrialAgentInfo


def _command_step(
    rec: TrajectoryRecorder, n: int, command: str, code: int, output: str, timed_out: bool = False
) -> None:
    head = (
        "The command timed out after 60.0 seconds and was killed. Output before the kill:"
        if timed_out
        else (f"Exit code: {code}")
    )
    rec.add_step(
        "agent",
        f"step {n}",
        tool_calls=[ToolCall(tool_call_id=f"call_{n}", function_name="bash", arguments={"command": command})],
        observation=Observation(
            results=[
                ObservationResult(
                    source_call_id=f"call_{n}",
                    content=f"{head}\nOutput:\n{output}",
                    extra={"exit_code": code, "timed_out": timed_out, "duration_sec": 0.1},
                )
            ]
        ),
    )


def _trial(root: Path, name: str, reward: float | None, exit_reason: str, steps: list[tuple[str, int, str]]) -> Path:
    trial = root / "trials" / name
    (trial / "agent").mkdir(parents=True)
    rec = TrajectoryRecorder(trial / "agent" / "trajectory.json", agent=AgentInfo(name="solver", version="1"))
    rec.add_step("system", "sys")
    rec.add_step("user", "task")
    for i, (cmd, code, out) in enumerate(steps, start=3):
        _command_step(rec, i, cmd, code, out, timed_out=code == 124)
    rec.finish(exit_reason=exit_reason, turns=len(steps))
    result = TrialResult(
        task_name=name.rpartition("__")[0],
        trial_name=name,
        trial_uri=trial.as_uri(),
        task_id=TaskId(path="/tasks/x"),
        task_checksum="0",
        agent_info=TrialAgentInfo(name="solver"),
        agent_result=AgentContext(
            n_input_tokens=100, n_output_tokens=20, metadata={"exit_reason": exit_reason, "turns": len(steps)}
        ),
        verifier_result=VerifierResult(rewards={"reward": reward}) if reward is not None else None,
    )
    (trial / "result.json").write_text(result.model_dump_json())
    return trial


def test_digest_of_synthetic_trials(tmp_path: Path) -> None:
    _trial(
        tmp_path,
        "log-summary__1",
        0.0,
        "max_turns",
        [
            ("ls /app/logs", 0, "access.log\naccess.log.1"),
            (
                "zcat /app/logs/access.log.9.gz | wc -l",
                1,
                "gzip: /app/logs/access.log.9.gz: No such file or directory\n0",
            ),
            ("sleep 100", 124, ""),
            ("cat /app/report.txt", 0, "200 3"),
        ],
    )
    _trial(tmp_path, "log-summary__2", 1.0, "submitted", [("bash /tmp/solve.sh", 0, "done")])

    assert [p.name for p in find_trial_dirs(tmp_path)] == ["log-summary__1", "log-summary__2"]
    assert find_trial_dirs(tmp_path / "trials" / "log-summary__2") == [tmp_path / "trials" / "log-summary__2"]
    failed, solved = digest_trials([tmp_path])

    assert (failed.task, failed.attempt, failed.reward, failed.turns) == ("log-summary", 1, 0.0, 4)
    assert failed.exit_reason == "max_turns" and failed.limits_hit == ["max_turns"]
    assert failed.commands == 4 and failed.last_command == "cat /app/report.txt"
    assert [(f.step, f.exit_code, f.timed_out) for f in failed.failed_commands] == [(4, 1, False), (5, 124, True)]
    assert failed.failed_commands[0].error_lines == ["gzip: /app/logs/access.log.9.gz: No such file or directory"]
    assert failed.tokens == 120
    assert solved.solved and solved.failed_commands == [] and solved.limits_hit == []

    text = render_digest([failed, solved])
    assert "2 attempts on 1 tasks; 1 solved" in text
    assert "| log-summary | 2 | 1 | 2.5 | max_turns |" in text
    assert "failed (step 4, exit 1): `zcat /app/logs/access.log.9.gz | wc -l` -> gzip:" in text
    assert "failed (step 5, timed out): `sleep 100`" in text
    assert "- last command: `cat /app/report.txt`" in text


def test_unreadable_trials_are_skipped_and_empty_digest_says_so(tmp_path: Path) -> None:
    bad = tmp_path / "trials" / "broken__1"
    bad.mkdir(parents=True)
    (bad / "result.json").write_text("{not json")
    assert digest_trials([tmp_path]) == []
    assert "No solver trajectories were given" in render_digest([])


def test_error_lines_prefer_errors_and_fall_back_to_the_last_lines() -> None:
    out = "Exit code: 2\nOutput:\nline one\nTraceback (most recent call last):\nValueError: bad\nmore"
    assert error_lines(out) == ["Traceback (most recent call last):", "ValueError: bad"]
    assert error_lines("Exit code: 1\nOutput:\na\nb\nc") == ["b", "c"]
