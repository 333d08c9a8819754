"""End to end on Docker with scripted models: an agentic episode (write, check, fix, check, submit) and
prompt-only calls, each candidate then validated by the pipeline (K=3 + nop + leakage)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proposer_scripts import TEST_SH, TEST_SH_BROKEN, bash, prompt_reply, write_task_command

from autoenvscaling.agent.trajectory import read_trajectory
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.proposer.config import ProposerConfig
from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.records import ProposalRecord
from autoenvscaling.roles.proposer.run import ProposeConfig, ProposeRun
from autoenvscaling.sandbox.docker import DockerBackend

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_agentic_episode_checks_fixes_and_submits_a_valid_task(
    tmp_path: Path, backend: DockerBackend, terminal_domain: DomainContext
) -> None:
    replies = [
        bash("cat /workshop/README.md"),
        bash(write_task_command(TEST_SH_BROKEN), "Write the new task."),
        bash("check"),
        bash(f"cat > /workshop/task/tests/test.sh <<'EOF'\n{TEST_SH}EOF", "Write the reward."),
        bash("try cat /app/data/numbers.txt", "Look at the image."),
        bash("check"),
        "It passed.\n\nsubmit",
    ]
    model = ScriptedModel(replies)
    out = tmp_path / "out"
    config = ProposeConfig(mode="agentic", n=1, proposer=ProposerConfig(max_turns=10, max_checks=3))
    (record,) = ProposeRun(out, backend, model, terminal_domain, config).run()

    first, tried, second = (model.calls[i][-1].content for i in (3, 5, 6))
    assert "check 1/3: FAILED" in first
    # The first problem only (the lint finding, with its file), not the failed run that follows from it.
    assert "Problem: tests/test.sh: never writes /logs/verifier/reward.txt" in first
    assert "File to change: /workshop/task/tests/test.sh" in first
    assert "finished without writing" not in first and "Checks left: 2 of 3" in first
    assert "3\n5\n7\n11" in tried and "without /tests and /solution" in tried
    assert "check 2/3: PASSED" in second

    assert record.verdict == "valid", record
    assert (record.mode, record.generation.turns, record.generation.checks_used) == ("agentic", 7, 2)
    assert record.generation.exit_reason == "submitted" and record.generation.tokens > 0
    assert record.validation.verdict == "valid" and record.validation.wall_sec > 0
    cand = Path(record.candidate_dir or "")
    assert cand == out / "candidates" / "agentic-000"
    assert "sum of all the integers" in (cand / "instruction.md").read_text()
    ep = Path(record.episode_dir)
    assert (ep / "checks" / "01" / "agentic-000" / "tests" / "test.sh").read_text().endswith("echo PASSED\n")
    assert json.loads((ep / "checks" / "02" / "report.json").read_text())["verdict"] == "valid"
    traj = read_trajectory(ep / "trajectory.json")
    assert traj.extra is not None and traj.extra["exit_reason"] == "submitted"
    assert [s.source for s in traj.steps][:3] == ["system", "user", "agent"] and len(traj.steps) == 9
    lines = (out / "results.jsonl").read_text().splitlines()
    assert ProposalRecord.model_validate_json(lines[0]).verdict == "valid"
    assert json.loads((out / "summary.json").read_text())["valid"] == 1
    assert (out / "validation" / "results.jsonl").is_file() and (out / "digest.md").is_file()


def test_prompt_only_valid_broken_and_unparseable(
    tmp_path: Path, backend: DockerBackend, terminal_domain: DomainContext
) -> None:
    model = ScriptedModel([prompt_reply(), prompt_reply(TEST_SH_BROKEN), "I cannot do that."])
    config = ProposeConfig(mode="prompt", n=3)
    records = {r.id: r for r in ProposeRun(tmp_path / "out", backend, model, terminal_domain, config).run()}
    # One call each, in order (concurrency 1): ids follow the script.
    good, broken, junk = records["prompt-000"], records["prompt-001"], records["prompt-002"]
    assert good.verdict == "valid", good
    assert good.generation.turns == 1 and good.generation.checks_used == 0
    assert broken.verdict == "invalid"
    assert {"lint:no-reward-write", "reward-missing"} <= set(broken.failed_checks)
    assert (junk.verdict, junk.failed_checks, junk.candidate_dir) == ("no-candidate", ["proposal-unparseable"], None)
    traj = read_trajectory(Path(good.episode_dir) / "trajectory.json")
    assert [s.source for s in traj.steps] == ["system", "user", "agent"]
    assert traj.steps[2].metrics is not None and traj.steps[2].metrics.completion_tokens
    assert "ini-to-json" in traj.steps[1].message  # the example, inlined
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["by_verdict"] == {"valid": 1, "invalid": 1, "no-candidate": 1}


def test_the_progress_line_never_calls_a_copy_of_an_example_valid(
    tmp_path: Path, backend: DockerBackend, terminal_domain: DomainContext
) -> None:
    example = terminal_domain.examples[0]

    def files(sub: str) -> list[dict[str, str]]:
        root = example / sub
        return [
            {"path": p.relative_to(root).as_posix(), "content": p.read_text()}
            for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in ("Dockerfile", "test.sh")
        ]

    copy = {
        "name": "copy",
        "description": "",
        "difficulty": "easy",
        "instruction": (example / "instruction.md").read_text(),
        "dockerfile": (example / "environment" / "Dockerfile").read_text(),
        "environment_files": files("environment"),
        "solve_sh": (example / "solution" / "solve.sh").read_text(),
        "test_sh": (example / "tests" / "test.sh").read_text(),
        "test_files": files("tests"),
    }
    seen: list[tuple[str, list[str]]] = []
    run = ProposeRun(
        tmp_path / "out", backend, ScriptedModel([json.dumps(copy)]), terminal_domain, ProposeConfig(mode="prompt")
    )
    (record,) = run.validate(
        run.generate(), on_validated=lambda r: seen.append((r.verdict.value, list(r.failed_checks)))
    )
    assert record.validation.verdict == "valid"  # the validator alone cannot tell a copy
    assert record.verdict == "invalid" and "duplicate-of-example" in record.failed_checks
    assert seen == [("invalid", ["duplicate-of-example"])]
