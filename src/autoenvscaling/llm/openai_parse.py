"""Translate between our message types and the OpenAI chat-completions wire format.

Responses are read as plain JSON (``ChatCompletion.to_dict()``) because the useful extras are not in the
SDK's types: vLLM's ``prompt_token_ids`` / ``choices[0].token_ids``, llama.cpp's ``timings`` and
per-token ``id``, OpenRouter's ``usage.cost``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from autoenvscaling.llm.base import Message, ModelError, ModelResponse, ToolCall, ToolSpec, Usage
from autoenvscaling.llm.text_tool_calls import extract_tool_calls

RAW_ARGUMENTS_KEY = "_raw"  # ToolCall.arguments holds the unparsed string here when it is not JSON


def to_wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [_wire_message(m) for m in messages]


def _wire_message(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["content"] = message.content or None
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": _dump_arguments(call.arguments)},
            }
            for call in message.tool_calls
        ]
    if message.role == "tool":
        wire["tool_call_id"] = message.tool_call_id or ""
    return wire


def _dump_arguments(arguments: Mapping[str, Any]) -> str:
    raw = arguments.get(RAW_ARGUMENTS_KEY)
    if set(arguments) == {RAW_ARGUMENTS_KEY} and isinstance(raw, str):
        return raw  # send back exactly what the model wrote
    return json.dumps(arguments)


def to_wire_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def parse_completion(
    data: Mapping[str, Any],
    *,
    tool_names: Sequence[str] = (),
    text_tool_calls: bool = True,
    fallback_name: str = "",
) -> ModelResponse:
    """A ``ModelResponse`` from a chat-completion JSON body; cost is left for the caller."""
    choices = data.get("choices") or []
    if not choices or not isinstance(choices[0], Mapping):
        raise ModelError(f"{fallback_name}: response has no choices: {json.dumps(data)[:300]}")
    choice: Mapping[str, Any] = choices[0]
    message: Mapping[str, Any] = choice.get("message") or {}
    content = message.get("content") or ""
    calls = [_parse_tool_call(c, i) for i, c in enumerate(message.get("tool_calls") or [])]
    if not calls and text_tool_calls and tool_names:
        calls = extract_tool_calls(content, tool_names)
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    entries = _logprob_entries(choice)
    return ModelResponse(
        content=content,
        reasoning_content=reasoning if isinstance(reasoning, str) else None,
        tool_calls=calls,
        finish_reason=choice.get("finish_reason"),
        model_name=str(data.get("model") or fallback_name),
        usage=parse_usage(data),
        prompt_token_ids=_int_list(data.get("prompt_token_ids")),
        completion_token_ids=_int_list(choice.get("token_ids")) or _int_list([e.get("id") for e in entries]),
        logprobs=[float(e["logprob"]) for e in entries] if entries else None,
    )


def _parse_tool_call(raw: Mapping[str, Any], index: int) -> ToolCall:
    function: Mapping[str, Any] = raw.get("function") or {}
    text = function.get("arguments")
    arguments: Any
    if isinstance(text, Mapping):
        arguments = dict(text)
    else:
        try:
            arguments = json.loads(text or "{}")
        except json.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):  # malformed arguments are the agent's problem, not ours
            arguments = {RAW_ARGUMENTS_KEY: text or ""}
    return ToolCall(id=str(raw.get("id") or f"call_{index}"), name=str(function.get("name") or ""), arguments=arguments)


def parse_usage(data: Mapping[str, Any]) -> Usage:
    """Token counts; cached tokens from ``prompt_tokens_details`` or llama.cpp's ``timings``."""
    usage: Mapping[str, Any] = data.get("usage") or {}
    timings: Mapping[str, Any] = data.get("timings") or {}
    prompt = _int(usage.get("prompt_tokens"))
    completion = _int(usage.get("completion_tokens"))
    if not usage and timings:  # llama.cpp builds that omit usage still report timings
        prompt = _int(timings.get("prompt_n")) + _int(timings.get("cache_n"))
        completion = _int(timings.get("predicted_n"))
    details: Mapping[str, Any] = usage.get("prompt_tokens_details") or {}
    if details.get("cached_tokens") is not None:
        cached = _int(details.get("cached_tokens"))
    elif "cache_n" in timings:
        cached = _int(timings.get("cache_n"))
    elif "prompt_n" in timings:  # evaluated tokens; the rest of the prompt came from the KV cache
        cached = max(0, prompt - _int(timings.get("prompt_n")))
    else:
        cached = 0
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=min(cached, prompt))


def _logprob_entries(choice: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if not isinstance(content, list):
        return []
    entries = [e for e in content if isinstance(e, Mapping) and isinstance(e.get("logprob"), int | float)]
    return entries if len(entries) == len(content) else []


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _int_list(value: Any) -> list[int] | None:
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return list(value)
