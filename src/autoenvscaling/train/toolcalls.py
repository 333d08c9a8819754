"""How GRPO reads a rollout's tool calls: TRL's parser for the chat template (``<tool_call>`` tags), and, when it
finds none, the calls a small model writes as bare or fenced JSON.

Qwen2.5-Coder 0.5B/1.5B answer a ``tools=`` prompt with ``{"name": "bash", "arguments": {...}}``, often in a
```json fence, and almost never in the template's tags (0 of 16 samples with a tagged example in the prompt). TRL
parses tags only, so without this no command runs, every reward is 0 and no GRPO group has an advantage to learn
from. The same shapes are what the solver's own text parser (``llm.text_tool_calls``) accepts. The completion's
tokens are trained on as generated; only how they are read changes.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from autoenvscaling.llm.text_tool_calls import extract_tool_calls


def read_bare_json_calls(tokenizer: Any, tool_names: Collection[str]) -> Any:
    """``tokenizer`` with TRL's response parser for its chat template, falling back to JSON calls of
    ``tool_names`` in the content when the parser finds no tagged call. Returns the same tokenizer."""
    from trl.chat_template_utils import add_response_schema

    if getattr(tokenizer, "response_template", None) is None and getattr(tokenizer, "response_schema", None) is None:
        add_response_schema(tokenizer)
    strict = tokenizer.parse_response
    names = frozenset(tool_names)

    def parse_response(ids: Any, *args: Any, **kwargs: Any) -> Any:
        parsed = strict(ids, *args, **kwargs)
        if not isinstance(parsed, dict) or parsed.get("tool_calls"):
            return parsed
        calls = extract_tool_calls(str(parsed.get("content") or ""), names)
        if not calls:
            return parsed
        found = [{"type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls]
        return {**parsed, "content": "", "tool_calls": found}

    tokenizer.parse_response = parse_response
    return tokenizer
