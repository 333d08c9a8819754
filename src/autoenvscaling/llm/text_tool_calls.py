"""Recover tool calls that a model wrote as JSON in its message content.

Small local models (Qwen2.5-Coder under llama.cpp among them) answer ``tools=`` requests with the call
as a JSON block in ``content`` and leave ``message.tool_calls`` empty. A block counts as a call only
when it names one of the offered tools, so ordinary JSON answers are left alone.
Accepted shapes: ``<tool_call>{...}</tool_call>``, a fenced ```json block, or the whole content; each
holding ``{"name": ..., "arguments": {...}}`` (``parameters`` also accepted) or a list of those.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from autoenvscaling.llm.base import ToolCall

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```(?:json)?\s*\n(.*?)```", re.DOTALL)


def extract_tool_calls(content: str, tool_names: Collection[str]) -> list[ToolCall]:
    """The calls to known tools found in ``content``, in order; ``[]`` when there are none."""
    if not content or not tool_names:
        return []
    blocks = _TAGGED.findall(content) or _FENCED.findall(content) or [content.strip()]
    calls: list[ToolCall] = []
    for block in blocks:
        for item in _json_items(block):
            call = _as_call(item, tool_names, len(calls))
            if call is not None:
                calls.append(call)
    return calls


def _json_items(block: str) -> list[Any]:
    try:
        value = json.loads(block)
    except json.JSONDecodeError:
        return []
    return value if isinstance(value, list) else [value]


def _as_call(item: Any, tool_names: Collection[str], index: int) -> ToolCall | None:
    if not isinstance(item, dict) or item.get("name") not in tool_names:
        return None
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):  # some models double-encode, as the OpenAI wire format does
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    if not isinstance(arguments, dict):
        return None
    return ToolCall(id=f"call_text_{index}", name=str(item["name"]), arguments=arguments)
