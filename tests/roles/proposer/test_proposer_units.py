"""Pure pieces of the proposer: tool parsing, the tool-calls format, novelty, build feedback, prompt-only parsing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import NoReturn

import pytest
from proposer_scripts import prompt_reply

from autoenvscaling.agent.errors import FormatError
from autoenvscaling.llm.base import ModelResponse, ToolCall
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.proposer.actions import ProposerBashBlockFormat, ProposerToolCallsFormat
from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.feedback import build_feedback
from autoenvscaling.roles.proposer.novelty import check_novelty, similarity
from autoenvscaling.roles.proposer.prompt_only import inline_examples, parse_proposal, write_proposal
from autoenvscaling.roles.proposer.run import ProposeConfig, ProposeRun
from autoenvscaling.roles.proposer.tools import harness_tool
from autoenvscaling.roles.proposer.workshop import TEMPLATE_DIR
from autoenvscaling.sandbox.base import EngineUnavailableError
from autoenvscaling.sandbox.fake import FakeBackend
from autoenvscaling.tasks import Finding, lint_task


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("check", ("check", "")),
        ("  check\n", ("check", "")),
        ("try ls -la /app", ("try", "ls -la /app")),
        ("try", ("try", "")),
        ("try cat <<'EOF'\nx\nEOF", ("try", "cat <<'EOF'\nx\nEOF")),
        ("check && ls", None),
        ("tryhard", None),
        ("ls /workshop", None),
    ],
)
def test_harness_tool(command: str, expected: tuple[str, str] | None) -> None:
    assert harness_tool(command) == expected


def test_tool_calls_format_maps_check_and_try_to_commands() -> None:
    fmt = ProposerToolCallsFormat()
    assert {t.name for t in fmt.tools() or []} == {"bash", "check", "try", "submit"}
    native = ModelResponse(tool_calls=[ToolCall(id="c1", name="check", arguments={})])
    action = fmt.parse(native)
    assert (action.kind, action.command, action.tool_call_id) == ("bash", "check", "c1")
    text = ModelResponse(content='<tool_call>{"name": "try", "arguments": {"command": "ls /app"}}</tool_call>')
    assert fmt.parse(text).command == "try ls /app"
    with pytest.raises(FormatError):
        fmt.parse(ModelResponse(tool_calls=[ToolCall(id="c2", name="try", arguments={})]))


def test_bash_block_format_takes_a_bare_check() -> None:
    fmt = ProposerBashBlockFormat()
    assert fmt.parse(ModelResponse(content="`check`")).command == "check"
    assert fmt.parse(ModelResponse(content="Done editing.\n\ncheck")).command == "check"
    assert fmt.parse(ModelResponse(content="```bash\nls\n```\ncheck")).command == "ls"
    assert fmt.parse(ModelResponse(content="`try ls -la /app`")).command == "try ls -la /app"
    assert fmt.parse(ModelResponse(content="submit")).kind == "submit"
    with pytest.raises(FormatError):
        fmt.parse(ModelResponse(content="Let me check the README first."))


def test_novelty_flags_copies_of_references(tmp_path: Path) -> None:
    assert similarity("a b c d", "a b c d") == 1.0
    assert similarity("one two three", "four five six") == 0.0
    copy = tmp_path / "copy"
    shutil.copytree(TEMPLATE_DIR, copy)
    text = (TEMPLATE_DIR / "instruction.md").read_text()
    (copy / "instruction.md").write_text(text.replace("same order", "same order, please"))
    result = check_novelty(copy, [TEMPLATE_DIR])
    assert not result.is_new and result.duplicate_of == "draft_template" and result.instruction_similarity > 0.8
    # A new instruction over the old solution and tests is still the old task.
    (copy / "instruction.md").write_text("Sum the integers of /app/data/numbers.txt into /app/sum.txt.")
    result = check_novelty(copy, [TEMPLATE_DIR])
    assert not result.is_new and result.instruction_similarity < 0.2 and result.grading_similarity == 1.0
    (copy / "solution" / "solve.sh").write_text("awk '{s += $1} END {print s}' /app/data/numbers.txt > /app/sum.txt\n")
    (copy / "tests" / "test_outputs.py").write_text("def test_sum():\n    assert open('/app/sum.txt').read() == '26'\n")
    assert check_novelty(copy, [TEMPLATE_DIR]).is_new  # test.sh (boilerplate) may stay as it was


def _recorded_task(root: Path, name: str, instruction: str, data: str, expected: str, output: str) -> Path:
    task = root / name
    (task / "environment" / "data").mkdir(parents=True)
    (task / "environment" / "data" / "access.log").write_text(data)
    (task / "tests" / "expected").mkdir(parents=True)
    (task / "tests" / "expected" / f"1-{output}").write_text(expected)
    (task / "instruction.md").write_text(instruction)
    (task / "solution").mkdir()
    (task / "solution" / "solve.sh").write_text(f"awk '$4 < 400' /app/data/access.log > /app/{output}\n")
    return task


def test_the_same_answer_from_the_same_files_is_a_copy_whatever_the_words(tmp_path: Path) -> None:
    from autoenvscaling.roles.proposer.novelty import answer_key

    # yield series v20 A1 #0 and #1: "less than 400" twice, under other words, another output name, and four
    # more input lines the rule does not keep
    log = "10.0.0.1 GET /index.html 200\n10.0.0.2 GET /missing 404\n"
    kept = "10.0.0.1 GET /index.html 200\n"
    first = _recorded_task(tmp_path, "a", "Select lines where the status code is less than 400.", log, kept, "b.txt")
    second = _recorded_task(
        tmp_path, "b", "Write only the lines whose status code is below 400, in input order, to the output file.",
        log + "10.0.0.3 GET /missing 404\n10.0.0.1 GET /login 500\n", kept + "\n", "less.txt",
    )  # fmt: skip
    assert answer_key(first) == answer_key(second) is not None
    found = check_novelty(second, [first])
    assert not found.is_new and found.same_answer and found.duplicate_of == "a" and found.instruction_similarity < 0.8
    other = _recorded_task(tmp_path, "c", "Keep the lines with status 404.", log, "10.0.0.2 GET /missing 404\n", "x")
    assert check_novelty(other, [first]).is_new
    # a short answer (a count) is no key: two rules can share it by chance
    count = _recorded_task(tmp_path, "d", "Count the lines.", log, "2\n", "n.txt")
    assert answer_key(count) is None and answer_key(TEMPLATE_DIR) is None


def test_build_feedback_names_the_failing_line_and_unavailable_base_image() -> None:
    dockerfile = "FROM autoenv/terminal:latest\nWORKDIR /app\n\nRUN apt-get install -y awk\n"
    detail = (
        "building autoenv-task/x:1 failed: The command '/bin/sh -c apt-get install -y awk' returned a non-zero "
        "code: 100\nStep 1/3 : FROM autoenv/terminal:latest\n ---> abc\nStep 2/3 : WORKDIR /app\n"
        "Step 3/3 : RUN apt-get install -y awk\nE: Unable to locate package awk"
    )
    lines = build_feedback(detail, dockerfile, [], ["autoenv/terminal:latest"])
    assert lines[0] == "build failed at Dockerfile line 4: RUN apt-get install -y awk"
    assert any("Unable to locate package awk" in ln for ln in lines[1:])
    finding = Finding(
        rule="uncataloged-base-image",
        severity="warning",
        file="environment/Dockerfile",
        line=1,
        message="FROM ubuntu:20.04 is not a catalog image (known: x); it may not build offline",
    )
    lines = build_feedback(
        "pull access denied for ubuntu", "FROM ubuntu:20.04\n", [finding], ["autoenv/terminal:latest"]
    )
    assert lines[0] == "base image ubuntu:20.04 is not available here; use one of: autoenv/terminal:latest"


def test_prompt_proposal_is_written_as_a_clean_task_dir(tmp_path: Path) -> None:
    proposal = parse_proposal("Here it is:\n" + prompt_reply())
    assert proposal is not None
    data = json.loads(prompt_reply())
    data["environment_files"].append({"path": "../../etc/evil", "content": "x"})
    data["test_files"].append({"path": "tests/helper.py", "content": "X = 1"})
    proposal = parse_proposal(json.dumps(data))
    assert proposal is not None
    notes = write_proposal(proposal, tmp_path / "t", "terminal")
    assert notes == ["left out environment file '../../etc/evil' (unsafe or duplicate path)"]
    assert (tmp_path / "t" / "tests" / "helper.py").read_text() == "X = 1\n"
    assert (tmp_path / "t" / "environment" / "numbers.txt").is_file()
    assert [f.rule for f in lint_task(tmp_path / "t") if f.severity == "error"] == []
    assert parse_proposal("no json here") is None
    assert parse_proposal('{"instruction": 3}') is None


def test_inline_examples_cuts_long_files() -> None:
    examples = Path(__file__).resolve().parents[3] / "examples" / "terminal"
    text = inline_examples([examples / "log-error-summary"], max_chars=100_000)
    assert text.index("### instruction.md") < text.index("### environment/Dockerfile")
    assert "[... truncated:" in text and len(text) < 20_000


class _LostEngine(FakeBackend):
    def _lost(self, *_a: object) -> NoReturn:
        raise EngineUnavailableError("lost the Docker engine (connection refused)")

    build = image_exists = create = _lost  # type: ignore[assignment]


_IDEA = {
    "operator": "filter",
    "change": "Count the requests that ended with status 404",
    "output_file": "/app/count404.txt",
    "compare": "exact",
    "new_data": False,
}
_SCRIPTS = {
    "agentic": ["```bash\nls /workshop\n```"],
    "staged": [
        json.dumps(_IDEA),
        "Count the requests with status 404 in /app/data/access.log and write the number to /app/count404.txt.",
        "```bash\ngrep -c ' 404$' /app/data/access.log > /app/count404.txt\n```",
    ],
}


@pytest.mark.parametrize("mode", ["agentic", "staged"])
def test_a_lost_engine_stops_the_run_instead_of_rejecting_candidates(
    tmp_path: Path, terminal_domain: DomainContext, mode: str
) -> None:
    # Infrastructure failures are errors: "generation-error" rejections would count the engine against the model.
    config = ProposeConfig.model_validate(
        {"mode": mode, "n": 1, "proposer": {"staged": {"order": "instruction_first"}}}
    )
    model = ScriptedModel(_SCRIPTS[mode] * 3)
    with pytest.raises(EngineUnavailableError, match="lost the Docker engine"):
        ProposeRun(tmp_path / "out", _LostEngine(), model, terminal_domain, config).run()
    assert not (tmp_path / "out" / "results.jsonl").exists()
    assert model.calls or mode == "agentic"  # staged: the engine was lost after the model had written a draft


def test_a_resumed_generate_keeps_logged_episodes_and_redoes_an_unfinished_one(
    tmp_path: Path, terminal_domain: DomainContext
) -> None:
    out = tmp_path / "out"
    first = ScriptedModel([prompt_reply(), "I cannot do that."])
    ProposeRun(out, FakeBackend(), first, terminal_domain, ProposeConfig(mode="prompt", n=2)).generate()
    assert len(first.calls) == 2
    left = out / "episodes" / "prompt-002" / "half-written.json"  # a killed episode's leftovers
    left.parent.mkdir(parents=True)
    left.write_text("{")

    seen: list[str] = []
    second = ScriptedModel([prompt_reply()])
    run = ProposeRun(out, FakeBackend(), second, terminal_domain, ProposeConfig(mode="prompt", n=3))
    gens = run.generate(lambda g: seen.append(g.id), resume=True)
    assert len(second.calls) == 1  # episode 002 only
    assert [g.id for g in gens] == seen == ["prompt-000", "prompt-001", "prompt-002"]
    assert [g.candidate_dir is not None for g in gens] == [True, False, True]
    assert not left.exists() and (out / "candidates" / "prompt-002" / "instruction.md").is_file()
    assert (out / "generations.jsonl").read_text().count("\n") == 3

    third = ScriptedModel([prompt_reply()] * 3)
    ProposeRun(out, FakeBackend(), third, terminal_domain, ProposeConfig(mode="prompt", n=3)).generate()
    assert len(third.calls) == 3  # without resume: every episode again
