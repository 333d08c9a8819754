"""Budgets stop runaway episodes, the best draft survives a later edit, a multi-block reply runs its first block
(fake sandbox: no Docker)."""

from __future__ import annotations

import json
from pathlib import Path

from proposer_scripts import bash

from autoenvscaling.llm.base import Message, ModelResponse, ToolCall
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.proposer.config import ProposerConfig
from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.episode import _choose, run_episode
from autoenvscaling.roles.proposer.tools import CheckRecord, DraftTools
from autoenvscaling.roles.proposer.workshop import DRAFT_DIR, Workshop, stage_workshop
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.tasks.model import task_content_hash


def _run(tmp_path: Path, domain: DomainContext, model: ScriptedModel, **config: object):  # type: ignore[no-untyped-def]
    return run_episode(
        model,
        FakeBackend(),
        domain,
        episode_dir=tmp_path / "episode",
        candidate_dir=tmp_path / "candidate",
        task_id="agentic-000",
        config=ProposerConfig.model_validate(config),
    )


def test_max_turns_stops_a_runaway_episode(tmp_path: Path, terminal_domain: DomainContext) -> None:
    model = ScriptedModel(responder=lambda _m: bash("ls /workshop"))
    result = _run(tmp_path, terminal_domain, model, max_turns=4)
    assert (result.exit_reason, result.turns, result.checks_used) == ("max_turns", 4, 0)
    assert len(model.calls) == 4
    # Nothing passed a check: the current draft (the untouched template) is handed in, to be rejected later.
    assert result.chosen_draft == "current" and result.candidate_dir is not None
    assert (Path(result.candidate_dir) / "instruction.md").is_file()
    doc = json.loads((tmp_path / "episode" / "trajectory.json").read_text())
    assert doc["extra"]["exit_reason"] == "max_turns"
    assert "ls /workshop" in doc["steps"][2]["tool_calls"][0]["arguments"]["command"]


def test_max_checks_ends_the_episode(tmp_path: Path, terminal_domain: DomainContext) -> None:
    # A command sent twice in a row is not run again, so the model looks at something between its checks.
    replies = iter([bash("check"), bash("ls /workshop")] * 10)
    model = ScriptedModel(responder=lambda _m: next(replies))
    result = _run(tmp_path, terminal_domain, model, max_turns=20, max_checks=2)
    assert (result.exit_reason, result.checks_used, result.turns) == ("max_checks", 2, 5)
    last_observation = model.calls[3][-1].content  # the reply after the second check
    assert "That was your last check" in last_observation
    assert (tmp_path / "episode" / "checks" / "02" / "feedback.txt").is_file()
    doc = json.loads((tmp_path / "episode" / "trajectory.json").read_text())
    assert doc["extra"]["exit_reason"] == "max_checks"
    assert "No checks left" in doc["steps"][-1]["observation"]["results"][0]["content"]


def test_token_budget_stops_the_episode(tmp_path: Path, terminal_domain: DomainContext) -> None:
    model = ScriptedModel(responder=lambda _m: bash("echo " + "x" * 400))
    result = _run(tmp_path, terminal_domain, model, max_turns=50, max_tokens_total=1500)
    assert result.exit_reason == "max_tokens" and result.turns < 50


def test_native_check_tool_call_runs_a_check(tmp_path: Path, terminal_domain: DomainContext) -> None:
    def reply(messages: list[Message]) -> ModelResponse:
        if not any(m.role == "tool" for m in messages):
            return ModelResponse(content="", tool_calls=[ToolCall(id="c1", name="check", arguments={})])
        return ModelResponse(content="", tool_calls=[ToolCall(id="c2", name="submit", arguments={})])

    model = ScriptedModel(responder=reply)
    result = _run(tmp_path, terminal_domain, model, action_format="tool_calls", max_checks=3)
    assert (result.exit_reason, result.checks_used) == ("submitted", 1)
    tool_msg = model.calls[1][-1]
    assert tool_msg.role == "tool" and tool_msg.tool_call_id == "c1" and tool_msg.content.startswith("Exit code: 1")
    assert "check 1/3: FAILED" in tool_msg.content
    tools = json.loads((tmp_path / "episode" / "trajectory.json").read_text())["agent"]["tool_definitions"]
    assert {t["function"]["name"] for t in tools} == {"bash", "check", "try", "submit"}


def test_choose_keeps_the_best_draft_after_a_breaking_edit(tmp_path: Path, terminal_domain: DomainContext) -> None:
    backend = FakeBackend()
    staging = tmp_path / "stage"
    start = tmp_path / "start"
    (start / "tests").mkdir(parents=True)
    (start / "instruction.md").write_text("v1\n")
    (start / "tests" / "test.sh").write_text("#!/bin/bash\n")
    stage_workshop(staging, domain=terminal_domain, readme="r", digest_md="d", trial_dirs=[], start_dir=start)
    workshop = Workshop(backend, "autoenv/terminal:latest")
    workshop.start(staging)
    tools = DraftTools(workshop, backend, tmp_path / "ep", "t")
    sb = workshop.sandbox

    def checked(passed: bool) -> None:
        copy = tools.snapshot(tmp_path / "ep" / "checks" / f"{len(tools.checks) + 1:02d}")
        tools.checks.append(
            CheckRecord(index=len(tools.checks) + 1, draft_dir=copy.path, content_hash=task_content_hash(copy.path),
                        passed=passed)
        )  # fmt: skip

    checked(True)  # v1 passes
    sb.exec(f"echo v2 > {DRAFT_DIR}/instruction.md")
    checked(False)  # v2 fails its check: submit hands in v1
    chosen, how = _choose(tools, tmp_path / "final", submitted=True)
    assert how == "best" and chosen is not None and (chosen / "instruction.md").read_text() == "v1\n"
    sb.exec(f"echo v3 > {DRAFT_DIR}/instruction.md")  # never checked: on submit, the current draft
    chosen, how = _choose(tools, tmp_path / "final", submitted=True)
    assert how == "current" and chosen is not None and (chosen / "instruction.md").read_text() == "v3\n"
    chosen, how = _choose(tools, tmp_path / "final", submitted=False)  # a budget ended it: the passing one
    assert how == "best" and chosen is not None and (chosen / "instruction.md").read_text() == "v1\n"
    workshop.stop()


def test_submit_is_refused_before_the_first_check(tmp_path: Path, terminal_domain: DomainContext) -> None:
    model = ScriptedModel(["submit", bash("check"), "submit"])
    result = _run(tmp_path, terminal_domain, model, max_turns=5)
    assert (result.exit_reason, result.turns, result.checks_used) == ("submitted", 3, 1)
    assert "Submission refused: run `check` first" in model.calls[1][-1].content


def test_require_check_off_accepts_a_submit_before_any_check(tmp_path: Path, terminal_domain: DomainContext) -> None:
    model = ScriptedModel([bash("ls /workshop"), "submit"])
    result = _run(tmp_path, terminal_domain, model, max_turns=5, require_check=False)
    assert (result.exit_reason, result.turns, result.checks_used) == ("submitted", 2, 0)


def test_a_write_and_check_reply_runs_the_write_and_says_the_check_did_not_run(
    tmp_path: Path, terminal_domain: DomainContext
) -> None:
    write = bash(f"echo 'Count the lines of /app/data.txt.' > {DRAFT_DIR}/instruction.md")
    model = ScriptedModel([f"{write}\n```bash\ncheck\n```\nsubmit", bash("check"), "submit"])
    result = _run(tmp_path, terminal_domain, model, max_turns=5, max_checks=3)
    assert (result.exit_reason, result.checks_used, result.turns) == ("submitted", 1, 3)
    seen = model.calls[1][-1].content
    assert "The other 1 block was NOT run: send it again" in seen and "submission was not accepted" in seen
    final = tmp_path / "episode" / "final" / "agentic-000" / "instruction.md"
    assert final.read_text() == "Count the lines of /app/data.txt.\n"
    # The solution and tests are still the template's: a copy, answered without building anything.
    assert "check 1/3: FAILED" in model.calls[2][-1].content
    assert not (tmp_path / "episode" / "checks" / "01" / "trials").exists()
