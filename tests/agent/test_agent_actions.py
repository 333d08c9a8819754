"""Parsing model replies into actions, for each action format."""

from __future__ import annotations

import json

import pytest

from autoenvscaling.agent.actions import Action, get_action_format, json_objects, redirect_targets
from autoenvscaling.agent.errors import FormatError
from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.base import ModelResponse, ToolCall


def parse(fmt: str, content: str = "", calls: list[ToolCall] | None = None) -> Action:
    return get_action_format(fmt).parse(ModelResponse(content=content, tool_calls=calls or []))


# -- bash_block --


def test_bash_block_one_command() -> None:
    a = parse("bash_block", "List files.\n```bash\nls -la\n```")
    assert (a.kind, a.command, a.thought, a.deferred_submit) == ("bash", "ls -la", "List files.", False)


@pytest.mark.parametrize("reply", ["submit", "SUBMIT", "All done.\n\nsubmit", "`submit`", "```bash\nsubmit\n```"])
def test_bash_block_submit(reply: str) -> None:
    assert parse("bash_block", reply).kind == "submit"


def test_bash_block_command_and_submit_defers_the_submit() -> None:
    a = parse("bash_block", "```bash\nmake\n```\nsubmit")
    assert (a.kind, a.command, a.deferred_submit) == ("bash", "make", True)


def test_bash_block_next_to_other_fenced_blocks() -> None:
    a = parse("bash_block", "The script:\n```python\nprint(1)\n```\nthen\n```bash\npython3 s.py\n```")
    assert (a.kind, a.command) == ("bash", "python3 s.py")


def test_bash_block_several_blocks_runs_the_first_and_lists_the_rest() -> None:
    reply = "Write, then check.\n```bash\necho x > f\n```\n```bash\ncat f\n```\n```sh\nwc -c f\n```"
    a = parse("bash_block", reply)
    assert (a.kind, a.command, a.skipped_blocks) == ("bash", "echo x > f", ["cat f", "wc -c f"])
    assert a.thought == "Write, then check." and not a.deferred_submit


def test_bash_block_several_blocks_and_submit_still_defers_the_submit() -> None:
    a = parse("bash_block", "```bash\nmake\n```\n```bash\nmake test\n```\nsubmit")
    assert (a.command, a.skipped_blocks, a.deferred_submit) == ("make", ["make test"], True)
    a = parse("bash_block", "```bash\nmake\n```\n```bash\nsubmit\n```")  # a submit block is no skipped command
    assert (a.command, a.skipped_blocks, a.deferred_submit) == ("make", [], True)


def test_bash_block_empty_blocks_are_not_commands() -> None:
    a = parse("bash_block", "```bash\n\n```\n```bash\nls\n```")
    assert (a.command, a.skipped_blocks) == ("ls", [])


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        # Backticks inside a heredoc do not close the block: only a fence alone on its line does.
        ("```bash\ncat > f <<'EOF'\nx ```y``` z\nEOF\n```", "cat > f <<'EOF'\nx ```y``` z\nEOF"),
        ("```bash\nprintf '```' > f\n```   \nok", "printf '```' > f"),  # spaces after the closing fence
        ("```bash\necho a\n```", "echo a"),  # the fence ends the text
        ("1. Write it:\n   ```bash\n   echo a\n   ```\n", "echo a"),  # indented under a list item
    ],
)
def test_bash_block_closing_fence_alone_on_its_line(reply: str, command: str) -> None:
    a = parse("bash_block", reply)
    assert (a.kind, a.command, a.skipped_blocks) == ("bash", command, [])


def test_bash_block_backticks_in_a_heredoc_do_not_start_a_second_block() -> None:
    reply = "```bash\ncat > r.md <<'EOF'\nrun ```bash ls``` here\nEOF\n```\n```bash\ncat r.md\n```"
    a = parse("bash_block", reply)
    assert a.command == "cat > r.md <<'EOF'\nrun ```bash ls``` here\nEOF" and a.skipped_blocks == ["cat r.md"]


def test_bash_block_sh_and_multiline() -> None:
    a = parse("bash_block", "```sh\ncd /app &&\n  make\n```")
    assert a.command == "cd /app &&\n  make"


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I think the answer is 4.", "no ```bash block found"),
        ("```bash\n\n```", "block is empty"),
        ("```bash\nls -la```", "block is not closed"),  # the fence must stand alone on its line
        ("Run:\n```bash\ncat > f <<'EOF'\nhalf a file", "block is not closed"),  # cut off by max_tokens
        ("```python\nprint(1)\n```", "no ```bash block found"),
        ("the word submit inside a sentence", "no ```bash block found"),
    ],
)
def test_bash_block_format_errors(reply: str, message: str) -> None:
    with pytest.raises(FormatError, match=message.replace("`", "`")):
        parse("bash_block", reply)


# -- tool_calls --


def test_native_tool_call() -> None:
    a = parse("tool_calls", "thinking", [ToolCall(id="x1", name="bash", arguments={"command": "ls"})])
    assert (a.kind, a.command, a.tool_call_id, a.thought) == ("bash", "ls", "x1", "thinking")


def test_native_bash_and_submit_defers_and_skips() -> None:
    calls = [ToolCall(id="s", name="submit"), ToolCall(id="b", name="bash", arguments={"command": "ls"})]
    a = parse("tool_calls", calls=calls)
    assert (a.kind, a.tool_call_id, a.deferred_submit) == ("bash", "b", True)
    assert [c.id for c in a.skipped_calls] == ["s"]


def test_native_unknown_tool_is_a_format_error_naming_the_calls() -> None:
    with pytest.raises(FormatError) as info:
        parse("tool_calls", calls=[ToolCall(id="z", name="python", arguments={"code": "1"})])
    assert info.value.tool_call_ids == ("z",)
    assert "python" in info.value.feedback


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "bash", "arguments": {"command": "ls /tmp"}}',
        'Run it:\n```json\n{"name": "bash", "arguments": {"command": "ls /tmp"}}\n```',
        '<tool_call>\n{"name": "bash", "arguments": {"command": "ls /tmp"}}\n</tool_call>',
        '{"name": "bash", "arguments": "{\\"command\\": \\"ls /tmp\\"}"}',
        '{"type": "function", "function": {"name": "bash", "parameters": {"command": "ls /tmp"}}}',
    ],
)
def test_qwen_json_in_content(content: str) -> None:
    a = parse("tool_calls", content)
    assert (a.kind, a.command, a.tool_call_id) == ("bash", "ls /tmp", None)
    assert "{" not in a.thought and "tool_call" not in a.thought


def test_qwen_json_submit_and_command_in_content() -> None:
    content = '{"name": "bash", "arguments": {"command": "ls"}}\n{"name": "submit", "arguments": {}}'
    a = parse("tool_calls", content)
    assert (a.kind, a.deferred_submit, a.skipped_calls) == ("bash", True, [])


def test_tool_calls_without_any_call() -> None:
    with pytest.raises(FormatError, match="no tool call found"):
        parse("tool_calls", "I would run ls.")


# -- json --


def test_json_bash_and_submit() -> None:
    a = parse("json", json.dumps({"thought": "look", "action": "bash", "command": "ls"}))
    assert (a.kind, a.command, a.thought) == ("bash", "ls", "look")
    assert parse("json", '{"thought": "", "action": "submit", "command": ""}').kind == "submit"


def test_json_submit_with_a_command_runs_it_first() -> None:
    a = parse("json", '{"thought": "", "action": "submit", "command": "cat out.txt"}')
    assert (a.kind, a.command, a.deferred_submit) == ("bash", "cat out.txt", True)


@pytest.mark.parametrize(
    "content",
    ["not json", '{"thought": "x", "action": "bash", "command": ""}', '{"action": "python", "command": "1"}'],
)
def test_json_format_errors(content: str) -> None:
    with pytest.raises(FormatError):
        parse("json", content)


# -- registry and helpers --


def test_unknown_format_name() -> None:
    with pytest.raises(UserInputError, match="unknown action format"):
        get_action_format("xml")


def test_format_by_dotted_path() -> None:
    fmt = get_action_format("autoenvscaling.agent.actions:JsonFormat")
    assert fmt.name == "json"


def test_json_objects_skips_broken_and_nested() -> None:
    found = [obj for obj, _, _ in json_objects('x {bad} {"a": {"b": 1}} y {"c": 2}')]
    assert found == [{"a": {"b": 1}}, {"c": 2}]


@pytest.mark.parametrize(
    ("reply", "command"),
    [("ls -la", "ls -la"), ("`cat /app/x`", "cat /app/x"), ("/usr/bin/env true", "/usr/bin/env true")],
)
def test_bare_one_line_command_is_accepted(reply: str, command: str) -> None:
    from autoenvscaling.agent.actions import BashBlockFormat
    from autoenvscaling.llm.base import ModelResponse

    action = BashBlockFormat().parse(ModelResponse(content=reply))
    assert (action.kind, action.command) == ("bash", command)


@pytest.mark.parametrize(
    ("command", "targets"),
    [
        ("grep -v 404 /app/data/access.log > /app/out.txt", ["/app/out.txt"]),
        ("echo hi >> log.txt && sort a >| b", ["log.txt", "b"]),
        ("cat > /app/solve.sh <<'EOF'\necho > x\nEOF", ["/app/solve.sh", "x"]),
        ("grep x a > '/app/q.txt'", ["/app/q.txt"]),
        ("awk '$4 > 500' /app/a.log", []),  # a comparison in a quoted program
        ("cmd 2> err.txt; cmd >&2; cmd > /dev/null 2>&1; cat <<< hi", []),
    ],
)
def test_the_files_a_command_sends_its_output_to(command: str, targets: list[str]) -> None:
    # yield series v13: after `grep -v "404" log > out.txt` a blind 1.5B solver read "(no output)" as "no line
    # matched" and overwrote its correct output
    assert redirect_targets(command) == targets
