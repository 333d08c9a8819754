"""Action formats: how a model reply becomes one ``Action`` (a command to run, or a submission).

Chosen by name (``AgentConfig.action_format``):

- ``tool_calls``: native ``message.tool_calls`` with the tools ``bash {command}`` and ``submit {}``. Small
  Qwen models ignore ``tools=`` and write the call as JSON in the content (bare, in a ```json fence, or in
  ``<tool_call>`` tags); that is parsed too.
- ``bash_block``: a ```bash fenced block; a line that is just ``submit`` finishes. Of several blocks the first
  runs and the observation says the others did not (``skipped_blocks``). A fence closes only on a line of its
  own, so a heredoc may hold ``` text.
- ``json``: JSON-schema constrained output ``{"thought", "action": "bash"|"submit", "command"}``.

A dotted path ``package.module:Class`` selects a format defined elsewhere. One rule holds for every format: a
reply that both runs a command and submits runs the command and refuses the submission for this turn, because
models declare success before seeing output (``deferred_submit``).
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, Field

from autoenvscaling.agent.errors import FormatError
from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.base import ModelResponse, ToolCall, ToolSpec


class Action(BaseModel):
    kind: Literal["bash", "submit"]
    command: str = ""
    thought: str = ""
    tool_call_id: str | None = None  # set when the action came from a native tool call (answer with role "tool")
    deferred_submit: bool = False  # the reply also asked to submit; refused this turn
    skipped_calls: list[ToolCall] = Field(default_factory=list)  # other native calls of the reply, not run
    skipped_blocks: list[str] = Field(default_factory=list)  # other ```bash blocks of the reply, not run
    first_block_repeated: bool = False  # the first block was the previous command: a later block ran instead


class ActionFormat(Protocol):
    name: str

    def tools(self) -> list[ToolSpec] | None:
        """Tools to offer the model (``tools=``), if the format uses them."""
        ...

    def response_format(self) -> dict[str, Any] | None:
        """``response_format=`` for the request, if the format constrains output."""
        ...

    def parse(self, response: ModelResponse) -> Action:
        """The reply's action, or ``FormatError`` with feedback for the model."""
        ...


BASH_TOOL = ToolSpec(
    name="bash",
    description="Run one bash command in the task's container and get its exit code and output.",
    parameters={
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The bash command to run."}},
        "required": ["command"],
    },
)
SUBMIT_TOOL = ToolSpec(
    name="submit",
    description="Declare the task finished. Call it alone, after you have checked the result.",
    parameters={"type": "object", "properties": {}},
)

_SUBMIT_LINE = re.compile(r"^\W*submit\W*$", re.IGNORECASE)
# Any fenced block (its language tag in group 1), so a ```python block is consumed whole and its closing fence
# is never mistaken for the opening of the next block. The closing fence counts only alone on its line (spaces
# around it allowed, as in a block indented under a list item): a ``` inside a heredoc (`x ```y``` z`) does not
# cut the command.
_FENCE = re.compile(r"```([\w+-]*)[ \t]*\n(.*?)^[ \t]*```[ \t]*$\n?", re.DOTALL | re.MULTILINE)
_SHELL_OPENING = re.compile(r"```(?:bash|sh|shell)[ \t]*\n", re.IGNORECASE)
_SHELL_TAGS = ("bash", "sh", "shell")
_LEFTOVER = re.compile(r"```(?:json)?|</?tool_call>", re.IGNORECASE)


def json_objects(text: str) -> Iterator[tuple[dict[str, Any], int, int]]:
    """Every top-level JSON object in ``text`` (inside fences, tags or prose), with its span."""
    decoder = json.JSONDecoder()
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            yield obj, i, end
        i = text.find("{", end)


def _from_calls(calls: list[ToolCall], thought: str, native: bool) -> Action:
    """One action from a reply's tool calls: the first bash call runs; a submit next to it is deferred."""
    bash = [c for c in calls if c.name == "bash" and isinstance(c.arguments.get("command"), str)]
    bash = [c for c in bash if c.arguments["command"].strip()]
    submits = [c for c in calls if c.name == "submit"]
    chosen = bash[0] if bash else submits[0] if submits else None
    if chosen is None:
        names = ", ".join(sorted({c.name for c in calls}))
        raise FormatError(
            f"no usable tool call (got: {names}); `bash` needs a non-empty `command`.",
            tuple(c.id for c in calls) if native else (),
        )
    kind: Literal["bash", "submit"] = "bash" if bash else "submit"
    return Action(
        kind=kind,
        command=chosen.arguments["command"] if kind == "bash" else "",
        thought=thought,
        tool_call_id=chosen.id if native else None,
        deferred_submit=kind == "bash" and bool(submits),
        skipped_calls=[c for c in calls if c is not chosen] if native else [],
    )


class ToolCallsFormat:
    name = "tool_calls"

    def tools(self) -> list[ToolSpec] | None:
        return [BASH_TOOL, SUBMIT_TOOL]

    def response_format(self) -> dict[str, Any] | None:
        return None

    def parse(self, response: ModelResponse) -> Action:
        if response.tool_calls:
            return _from_calls(response.tool_calls, response.content.strip(), native=True)
        calls: list[ToolCall] = []
        spans: list[tuple[int, int]] = []
        for obj, start, end in json_objects(response.content):
            call = self._call_from_json(obj, len(calls))
            if call is not None:
                calls.append(call)
                spans.append((start, end))
        if not calls:
            raise FormatError("no tool call found.")
        thought = response.content
        for start, end in reversed(spans):
            thought = thought[:start] + thought[end:]
        return _from_calls(calls, _LEFTOVER.sub("", thought).strip(), native=False)

    @staticmethod
    def _call_from_json(obj: dict[str, Any], index: int) -> ToolCall | None:
        """``{"name": ..., "arguments": {...}}`` as Qwen writes it; also ``parameters`` or a JSON string."""
        fn: dict[str, Any] = obj["function"] if isinstance(obj.get("function"), dict) else obj
        name = fn.get("name")
        args = fn.get("arguments", fn.get("parameters", {}))
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError:
                return None
        if not isinstance(name, str) or not isinstance(args, dict):
            return None
        return ToolCall(id=f"content_call_{index}", name=name, arguments=args)


class BashBlockFormat:
    name = "bash_block"

    def tools(self) -> list[ToolSpec] | None:
        return None

    def response_format(self) -> dict[str, Any] | None:
        return None

    def parse(self, response: ModelResponse) -> Action:
        text = response.content
        blocks = [m.group(2) for m in _FENCE.finditer(text) if m.group(1).lower() in _SHELL_TAGS]
        outside = _FENCE.sub("", text)
        submit = any(_SUBMIT_LINE.match(line) for line in outside.splitlines())
        commands = []
        for block in blocks:
            if _SUBMIT_LINE.match(block.strip()):  # ```bash\nsubmit\n``` means submit too
                submit = True
            elif block.strip():
                commands.append(block.strip())
        thought = "\n".join(ln for ln in outside.splitlines() if not _SUBMIT_LINE.match(ln)).strip()
        if commands:  # the first block runs; the observation names the others as not run
            return Action(
                kind="bash", command=commands[0], thought=thought, deferred_submit=submit, skipped_blocks=commands[1:]
            )
        if submit:
            return Action(kind="submit", thought=thought)
        if blocks:
            raise FormatError("the ```bash block is empty.")
        bare = _bare_command(text)
        if bare is not None:
            return Action(kind="bash", command=bare, thought="")
        if _SHELL_OPENING.search(outside):
            raise FormatError("the ```bash block is not closed: end it with ``` alone on its own line.")
        raise FormatError("no ```bash block found.")


# Small models often reply with a bare command (`ls -la`) instead of a fenced block. A one-line reply that starts
# with a common command or a path is taken as one; anything else still gets the format feedback.
_COMMON_COMMANDS = frozenset(
    "ls cat echo printf mkdir cd pwd grep egrep sed awk gawk find python3 python pip pip3 pytest touch cp mv rm "
    "chmod chown head tail wc sort uniq cut tr tee bash sh git tar gzip gunzip zcat diff test make curl jq "
    "sqlite3 xdotool screenshot start-display env export stat file du df ps kill which whoami date sleep".split()
)


def _bare_command(text: str) -> str | None:
    line = text.strip().strip("`").strip()
    if not line or "\n" in line or len(line) > 300:
        return None
    first = line.split()[0]
    if first in _COMMON_COMMANDS or first.startswith(("/", "./")):
        return line
    return None


class JsonFormat:
    name = "json"
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "thought": {"type": "string"},
            "action": {"type": "string", "enum": ["bash", "submit"]},
            "command": {"type": "string"},
        },
        "required": ["thought", "action", "command"],
        "additionalProperties": False,
    }

    def tools(self) -> list[ToolSpec] | None:
        return None

    def response_format(self) -> dict[str, Any] | None:
        return {
            "type": "json_schema",
            "json_schema": {"name": "action", "strict": True, "schema": self.SCHEMA},
        }

    def parse(self, response: ModelResponse) -> Action:
        obj = next((o for o, _, _ in json_objects(response.content) if "action" in o), None)
        if obj is None:
            raise FormatError('no JSON object with an "action" field found.')
        action, command, thought = obj.get("action"), obj.get("command", ""), obj.get("thought", "")
        if action not in ("bash", "submit") or not isinstance(command, str) or not isinstance(thought, str):
            raise FormatError('"action" must be "bash" or "submit", and "command" and "thought" strings.')
        if action == "bash" and not command.strip():
            raise FormatError('"action" is "bash" but "command" is empty.')
        if command.strip():
            return Action(kind="bash", command=command.strip(), thought=thought, deferred_submit=action == "submit")
        return Action(kind="submit", thought=thought)


ACTION_FORMATS: dict[str, Callable[[], ActionFormat]] = {
    "tool_calls": ToolCallsFormat,
    "bash_block": BashBlockFormat,
    "json": JsonFormat,
}


# A redirection of stdout to a file (not ``2>``, ``>&2`` or a here-string), the file as written.
_STDOUT_TO = re.compile(r"(?<![\d&<>])>>?\|?[ \t]*(?!&)(['\"]?)([^\s;&|<>'\"]+)\1")


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def redirect_targets(command: str) -> list[str]:
    """The files ``command`` sends its standard output to (``> out.txt``, ``>> log``), ``/dev/null`` left out: a
    small model that sees "(no output)" after ``grep -v 404 log > out.txt`` takes it for "nothing matched".
    A ``>`` inside a quoted program (``awk '$4 > 500'``) is no redirection."""

    def blank(m: re.Match[str]) -> str:
        return m.group(0) if command[: m.start()].rstrip().endswith(">") else " " * len(m.group(0))

    plain = _QUOTED.sub(blank, command)
    return [m.group(2) for m in _STDOUT_TO.finditer(plain) if m.group(2) != "/dev/null"]


def get_action_format(name: str) -> ActionFormat:
    """An action format by short name, or by dotted path ``package.module:Class``."""
    if name in ACTION_FORMATS:
        return ACTION_FORMATS[name]()
    module_name, _, attr = name.partition(":")
    if not attr:
        known = ", ".join(ACTION_FORMATS)
        raise UserInputError(f"unknown action format {name!r} (known: {known}; or package.module:Class)")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise UserInputError(f"cannot load action format {name!r}: {e}") from None
    fmt: ActionFormat = cls()
    return fmt
