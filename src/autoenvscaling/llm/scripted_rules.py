"""Scripted replies chosen by conversation, not by call order: the scripted model for pipelines and demos.

A plain reply list is consumed in call order, so the reply a conversation gets depends on what ran before it
in the process. A pipeline that runs many conversations (and may be resumed half way) needs each conversation
to get the same replies however the calls interleave. A rules file does that::

    {"rules": [
        {"match": "sum of all the integers",          # regex searched in the system + first user message
         "variants": [["```bash\\nawk ...\\n```", "submit"],
                      ["```bash\\nls\\n```", "submit"]]},
        {"match": "Build ONE new", "replies": ["..."]} # one variant
     ],
     "default": ["submit"]}                            # optional: conversations no rule matches

Reply ``k`` of a conversation is item ``k`` of its variant. A new conversation takes the rule's next variant in
turn (round robin per rule, per model instance); later turns find their variant again from the replies already
in the history, so the variants of a rule must differ in their first reply. An item is a reply string,
``{"error": "message"}`` (the endpoint fails on cue) or ``{"delay": seconds, "reply": "..."}``.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from autoenvscaling.llm.base import Message, ModelError
from autoenvscaling.llm.scripted_items import ScriptedDelay, ScriptedError, ScriptItem


class _Item(BaseModel):
    error: str | None = None
    delay: float | None = Field(default=None, ge=0)
    reply: str | None = None


RawItem = str | _Item


class Rule(BaseModel):
    match: str = ""
    replies: list[RawItem] | None = None
    variants: list[list[RawItem]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_form(self) -> Rule:
        if self.replies is not None:
            self.variants = [self.replies, *self.variants]
            self.replies = None
        if not self.variants or not all(self.variants):
            raise ValueError(f"rule {self.match!r}: needs replies or non-empty variants")
        firsts = [_text(v[0]) for v in self.variants]
        if len(set(firsts)) != len(firsts):
            raise ValueError(f"rule {self.match!r}: variants must differ in their first reply")
        re.compile(self.match)
        return self


class RulesScript(BaseModel):
    rules: list[Rule] = Field(default_factory=list)
    default: list[RawItem] | None = None


def _text(item: RawItem) -> str:
    if isinstance(item, str):
        return item
    return item.reply or ""


def _to_script_item(item: RawItem) -> ScriptItem:
    if isinstance(item, str):
        return item
    if item.error is not None:
        return ScriptedError(item.error)
    if item.delay is not None:
        return ScriptedDelay(item.delay, item.reply or "")
    return item.reply or ""


class RuleResponder:
    """The ``responder`` of a ``ScriptedModel`` that follows a ``RulesScript``. Thread-safe."""

    def __init__(self, script: RulesScript, name: str = "scripted") -> None:
        self.script = script
        self.name = name
        self._patterns = [re.compile(r.match) for r in script.rules]
        self._next_variant = [0] * len(script.rules)
        self._lock = threading.Lock()

    @classmethod
    def from_data(cls, data: Any, name: str = "scripted") -> RuleResponder:
        try:
            return cls(RulesScript.model_validate(data), name)
        except ValidationError as e:
            raise ModelError(f"{name}: not a valid rules script: {e.errors()[0]['msg']}") from None

    def _rule_for(self, messages: list[Message]) -> int | None:
        head: list[str] = []
        for m in messages:
            head.append(m.content)
            if m.role == "user":
                break
        text = "\n".join(head)
        return next((i for i, p in enumerate(self._patterns) if p.search(text)), None)

    def __call__(self, messages: list[Message]) -> ScriptItem:
        said = [m.content for m in messages if m.role == "assistant"]
        rule = self._rule_for(messages)
        if rule is None:
            if self.script.default is None:
                raise ModelError(f"{self.name}: no rule matches this conversation")
            variant = self.script.default
        else:
            variant = self._variant(rule, said)
        turn = len(said)
        if turn >= len(variant):
            raise ModelError(f"{self.name}: script exhausted after {turn} replies in this conversation")
        return _to_script_item(variant[turn])

    def _variant(self, rule: int, said: list[str]) -> list[RawItem]:
        variants = self.script.rules[rule].variants
        if not said:
            with self._lock:
                index = self._next_variant[rule] % len(variants)
                self._next_variant[rule] += 1
            return variants[index]
        for v in variants:
            if [_text(x) for x in v[: len(said)]] == said:
                return v
        raise ModelError(f"{self.name}: the history matches no variant of rule {self.script.rules[rule].match!r}")
