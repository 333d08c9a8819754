"""Parsing model replies into actions, for each action format."""

from __future__ import annotations

import json

import pytest

from autoenvscaling.agent.actions import Action, get_action_format, json_objects
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


def test_bash_block_sh_and_multiline() -> None:
    a = parse("bash_block", "```sh\ncd /app &&\n  make\n```")
    assert a.command == "cd /app &&\n  make"


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I think the answer is 4.", "no ```bash block found"),
        ("```bash\nls\n```\n```bash\npwd\n```", "found 2 ```bash blocks"),
        ("```bash\n\n```", "block is empty"),
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
