"""Tool calls written as JSON in the content (what the embedded Qwen models do with ``tools=``)."""

from __future__ import annotations

import pytest

from autoenvscaling.llm.text_tool_calls import extract_tool_calls

TOOLS = {"bash", "submit"}


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{\n  "name": "bash",\n  "arguments": {\n    "command": "ls"\n  }\n}\n```',
        '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>',
        '{"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}',
        'I will list the files.\n```\n{"name": "bash", "parameters": {"command": "ls"}}\n```',
    ],
)
def test_recognised_shapes(content: str) -> None:
    calls = extract_tool_calls(content, TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("bash", {"command": "ls"})]


def test_several_calls_keep_their_order() -> None:
    content = '<tool_call>{"name": "bash", "arguments": {"command": "a"}}</tool_call>\n' + (
        '<tool_call>{"name": "submit", "arguments": {}}</tool_call>'
    )
    calls = extract_tool_calls(content, TOOLS)
    assert [c.name for c in calls] == ["bash", "submit"]
    assert len({c.id for c in calls}) == 2


@pytest.mark.parametrize(
    "content",
    [
        "plain prose, no JSON",
        '{"name": "rm_everything", "arguments": {}}',  # not an offered tool
        '{"answer": 42}',  # ordinary JSON answer
        '```json\n{"name": "bash", "arguments": [1, 2]}\n```',
        '```json\n{"name": "bash", "arguments": {broken\n```',
    ],
)
def test_non_calls_are_left_alone(content: str) -> None:
    assert extract_tool_calls(content, TOOLS) == []


def test_no_tools_offered() -> None:
    assert extract_tool_calls('{"name": "bash", "arguments": {}}', set()) == []
