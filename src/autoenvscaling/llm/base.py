"""The model contract shared by every provider (OpenAI-compatible endpoints, the embedded server, the
scripted fake). One call = one chat completion; the agent loop owns the history."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from autoenvscaling.errors import AutoEnvError


class ModelError(AutoEnvError):
    """The model endpoint failed (after retries) or returned something unusable. Infrastructure, not reward."""


class ModelNotInstalledError(ModelError):
    """The embedded model is not installed (``autoenv model install``)."""


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Message(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None  # role == "tool" only
    reasoning_content: str | None = None


class ToolSpec(BaseModel):
    """A function the model may call (OpenAI ``tools=[{"type": "function", ...}]``)."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    latency_sec: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            latency_sec=self.latency_sec + other.latency_sec,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Sampling(BaseModel):
    """Per-call overrides of the model's configured sampling (``None`` keeps the configured value)."""

    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0)
    stop: list[str] | None = Field(
        default=None, max_length=4, description="generation ends before the first of these strings (not included)"
    )


class ModelResponse(BaseModel):
    content: str = ""
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    model_name: str = ""
    usage: Usage = Field(default_factory=Usage)
    # Present when the server returns them (vLLM with return_token_ids / logprobs=True).
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None


@runtime_checkable
class Model(Protocol):
    """A chat model. Implementations: ``OpenAIModel``, ``ScriptedModel``."""

    @property
    def name(self) -> str: ...

    @property
    def provider(self) -> str:
        """Which kind of model answers (``ModelConfig.provider``: openai, embedded, hf, scripted), as trial
        results record it."""
        ...

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: Sampling | None = None,
    ) -> ModelResponse: ...


_DEADLINE: ContextVar[float | None] = ContextVar("autoenv_generation_deadline", default=None)


@contextmanager
def generation_deadline(deadline: float | None) -> Iterator[None]:
    """Model calls made inside (in this thread) should end by ``deadline`` (a ``time.monotonic()`` value; None: no
    deadline). A model that can stop generating early returns what it has by then (``HfModel``: transformers'
    ``max_time``); the caller's own limits then end its run as they would after any call."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def seconds_left() -> float | None:
    """Seconds until the innermost ``generation_deadline`` of this thread (negative once past), or None."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()
