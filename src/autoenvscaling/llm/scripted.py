"""A deterministic model that replays scripted replies: the test double for every loop in the project.

Each script item is one reply. An item may be:
- a string: the reply's content;
- a ``ModelResponse``: returned as is (tool calls, usage...);
- a ``ScriptedError``: raised instead of replying (an endpoint failure on cue);
- a ``ScriptedDelay``: sleep, then use the wrapped reply.

Running past the end of the script raises ``ModelError`` (a test that needs more turns says so loudly).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autoenvscaling.llm.base import Message, ModelError, ModelResponse, Sampling, ToolSpec, Usage
from autoenvscaling.llm.scripted_items import Responder, ScriptedDelay, ScriptedError, ScriptItem
from autoenvscaling.llm.scripted_rules import RuleResponder
from autoenvscaling.stopping import check_stop


class ScriptedModel:
    """Replays ``script`` in order; or, with ``responder``, computes each reply from the history."""

    def __init__(
        self,
        script: Sequence[ScriptItem] = (),
        *,
        responder: Responder | None = None,
        name: str = "scripted",
    ) -> None:
        self._script = list(script)
        self._responder = responder
        self._name = name
        self._lock = threading.Lock()
        self.calls: list[list[Message]] = []  # every history the model was shown, for assertions
        self.samplings: list[Sampling | None] = []  # the per-call sampling overrides, alike

    @property
    def name(self) -> str:
        return self._name

    @property
    def provider(self) -> str:
        return "scripted"

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        """A JSON list of strings (replies), or a rules object (``scripted_rules``): forms selectable from config."""
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise ModelError(f"{path}: cannot read scripted replies: {e}") from None
        name = f"scripted:{path.name}"
        if isinstance(data, dict):  # a rules script: replies chosen per conversation (see scripted_rules)
            return cls(responder=RuleResponder.from_data(data, name), name=name)
        if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
            raise ModelError(f"{path}: expected a JSON list of reply strings (or a rules object)")
        return cls(data, name=name)

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: Sampling | None = None,
    ) -> ModelResponse:
        check_stop()  # a run interrupted meanwhile: this thread stops before a new call
        with self._lock:
            self.calls.append(list(messages))
            self.samplings.append(sampling)
            if self._responder is not None:
                item: ScriptItem = self._responder(list(messages))
            elif self._script:
                item = self._script.pop(0)
            else:
                raise ModelError(f"{self._name}: script exhausted after {len(self.calls) - 1} replies")
        started = time.perf_counter()
        if isinstance(item, ScriptedDelay):
            time.sleep(item.seconds)
            item = item.reply
        if isinstance(item, ScriptedError):
            raise ModelError(item.message)
        if isinstance(item, ModelResponse):
            return item
        if sampling is not None and sampling.stop:  # as a server does: the reply ends before the first stop string
            cut = min((i for i in (item.find(s) for s in sampling.stop) if i >= 0), default=len(item))
            item = item[:cut]
        prompt_chars = sum(len(m.content) for m in messages)
        usage = Usage(
            prompt_tokens=max(1, prompt_chars // 4),
            completion_tokens=max(1, len(item) // 4),
            latency_sec=time.perf_counter() - started,
        )
        return ModelResponse(content=item, finish_reason="stop", model_name=self._name, usage=usage)
