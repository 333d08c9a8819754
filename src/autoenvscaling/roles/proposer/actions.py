"""The proposer's tool-calls format: the agent's ``bash``/``submit`` plus the harness tools ``check`` and ``try``.

Text formats need nothing new: a ```bash block (or a JSON ``command``) that is exactly ``check`` or
``try <cmd>`` is intercepted by the episode. For native tool calls, ``check`` and ``try`` are offered as
tools of their own and rewritten here into the same command text, so every format reaches one code path.
"""

from __future__ import annotations

import re
from typing import Any

from autoenvscaling.agent.actions import BASH_TOOL, SUBMIT_TOOL, Action, BashBlockFormat, ToolCallsFormat
from autoenvscaling.agent.errors import FormatError
from autoenvscaling.llm.base import ModelResponse, ToolCall, ToolSpec
from autoenvscaling.roles.proposer.tools import harness_tool

FORMAT_PATHS = {
    "tool_calls": "autoenvscaling.roles.proposer.actions:ProposerToolCallsFormat",
    "bash_block": "autoenvscaling.roles.proposer.actions:ProposerBashBlockFormat",
}
_CHECK_LINE = re.compile(r"^\W*check\W*$", re.IGNORECASE)

CHECK_TOOL = ToolSpec(
    name="check",
    description="Validate the draft in /workshop/task (lint, build, reference solution, do-nothing run, leaks) "
    "and get a short report of what to fix.",
    parameters={"type": "object", "properties": {}},
)
TRY_TOOL = ToolSpec(
    name="try",
    description="Run one command in a fresh container of the draft's built image (no network, 30 s) and get its "
    "output, e.g. to see what the solver will see.",
    parameters={
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The bash command to run."}},
        "required": ["command"],
    },
)


def as_bash(call: ToolCall) -> ToolCall:
    """``check`` -> bash ``check``; ``try {command}`` -> bash ``try <command>``; anything else unchanged."""
    if call.name == "check":
        return ToolCall(id=call.id, name="bash", arguments={"command": "check"})
    command = call.arguments.get("command")
    if call.name == "try" and isinstance(command, str) and command.strip():
        return ToolCall(id=call.id, name="bash", arguments={"command": f"try {command.strip()}"})
    return call


class ProposerToolCallsFormat(ToolCallsFormat):
    name = "tool_calls"

    def tools(self) -> list[ToolSpec] | None:
        return [BASH_TOOL, CHECK_TOOL, TRY_TOOL, SUBMIT_TOOL]

    def parse(self, response: ModelResponse) -> Action:
        if response.tool_calls:
            response = response.model_copy(update={"tool_calls": [as_bash(c) for c in response.tool_calls]})
        return super().parse(response)

    @staticmethod
    def _call_from_json(obj: dict[str, Any], index: int) -> ToolCall | None:
        call = ToolCallsFormat._call_from_json(obj, index)
        return None if call is None else as_bash(call)


class ProposerBashBlockFormat(BashBlockFormat):
    """Fenced bash blocks; without one, a bare ``check`` or one-line ``try <cmd>`` reply (like a bare ``submit``)."""

    name = "bash_block"

    def parse(self, response: ModelResponse) -> Action:
        try:
            return super().parse(response)
        except FormatError:
            text = response.content.strip()
            one_line = text.strip("`").strip()
            if "\n" not in one_line and harness_tool(one_line) is not None:  # `try ls /app`, `check`
                return Action(kind="bash", command=one_line)
            if "```" not in text and any(_CHECK_LINE.match(ln) for ln in text.splitlines()):
                return Action(kind="bash", command="check", thought=text)
            raise
