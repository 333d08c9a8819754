"""``OpenAIModel``: the ``Model`` protocol over any OpenAI-compatible chat-completions endpoint.

vLLM, SGLang, llama.cpp (the embedded server), OpenRouter and OpenAI all speak this API. Retries are
ours, not the SDK's, so the policy is explicit: 429, 5xx and connection errors back off exponentially
with jitter (honouring ``Retry-After``); any other 4xx is a bad request that retrying cannot fix, so it
fails at once with the server's message.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

import openai

from autoenvscaling.llm import inflight
from autoenvscaling.llm.base import Message, ModelError, ModelResponse, Sampling, ToolSpec, Usage
from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.llm.cost import estimate_cost, is_local_url, provider_cost
from autoenvscaling.llm.openai_parse import parse_completion, to_wire_messages, to_wire_tools
from autoenvscaling.stopping import check_stop

_PLACEHOLDER_KEY = "EMPTY"  # self-hosted servers ignore the key, but the SDK insists on one


class OpenAIModel:
    """One chat completion per ``complete`` call. Thread-safe: the underlying HTTP client is."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if not config.name:
            raise ModelError("OpenAIModel needs a model name")
        # The SDK would read $OPENAI_BASE_URL itself; resolving it here keeps cost and messages truthful.
        base_url = config.base_url or os.environ.get("OPENAI_BASE_URL") or None
        config = config.model_copy(update={"base_url": base_url})
        self.config = config
        self._sleep = sleep
        self._rng = rng or random.Random()
        api_key = os.environ.get(config.api_key_env) or None
        if api_key is None and config.base_url is None:
            raise ModelError(f"{config.name}: set ${config.api_key_env} (or give --base-url for another endpoint)")
        self._client = openai.OpenAI(
            api_key=api_key or _PLACEHOLDER_KEY,
            base_url=config.base_url,
            timeout=config.timeout_sec,
            max_retries=0,
        )

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def provider(self) -> str:
        return self.config.provider  # "embedded" when it talks to the embedded server

    def close(self) -> None:
        self._client.close()

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: Sampling | None = None,
    ) -> ModelResponse:
        check_stop()  # a run interrupted meanwhile: this thread stops before a new call
        request = self._request(messages, tools, response_format, sampling)
        started = time.perf_counter()
        data = self._create_with_retries(request)
        latency = time.perf_counter() - started  # what the caller waited, retries included
        response = parse_completion(
            data,
            tool_names=[t.name for t in tools or []],
            text_tool_calls=self.config.text_tool_calls,
            fallback_name=self.name,
        )
        usage = response.usage.model_copy(update={"latency_sec": latency, "cost_usd": self._cost(data, response.usage)})
        return response.model_copy(update={"usage": usage})

    def _request(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None,
        response_format: dict[str, Any] | None,
        overrides: Sampling | None = None,
    ) -> dict[str, Any]:
        cfg = self.config
        request: dict[str, Any] = {"model": cfg.name, "messages": to_wire_messages(messages)}
        sampling = {
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "max_tokens": cfg.max_tokens,
            "seed": cfg.seed,
        }
        if overrides is not None:
            sampling.update(overrides.model_dump(exclude_none=True))
        request.update({k: v for k, v in sampling.items() if v is not None})
        if tools:
            request["tools"] = to_wire_tools(tools)
        if response_format is not None:
            request["response_format"] = response_format
        extra_body = dict(cfg.extra_body)
        if cfg.capture_token_ids:
            # logprobs with one alternative: llama.cpp returns none at top_logprobs=0, and more is waste.
            request.update(logprobs=True, top_logprobs=1)
            extra_body.setdefault("return_token_ids", True)  # vLLM: prompt_token_ids + choices[].token_ids
        if extra_body:
            request["extra_body"] = extra_body
        return request

    def _create_with_retries(self, request: dict[str, Any]) -> Mapping[str, Any]:
        attempts = self.config.max_retries + 1
        for attempt in range(attempts):
            try:
                with inflight.request(self.config.base_url):  # an embedded server waits for it before it stops
                    completion = self._client.chat.completions.create(**request)
                return dict(completion.to_dict())
            except openai.APIStatusError as e:
                if not _retryable_status(e.status_code) or attempt == attempts - 1:
                    raise ModelError(self._describe(e, attempt + 1)) from None
                delay = max(self._backoff(attempt), _retry_after(e, self.config.backoff_max_sec))
            except openai.APIConnectionError as e:  # includes timeouts
                if attempt == attempts - 1:
                    raise ModelError(self._describe(e, attempt + 1)) from None
                delay = self._backoff(attempt)
            except openai.OpenAIError as e:  # malformed response body and the like
                raise ModelError(f"{self.name}: {e}") from None
            self._sleep(delay)
            check_stop()  # no retry for a run that was interrupted during the backoff
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int) -> float:
        """Exponential with jitter in [50%, 100%]: spreads a crowd of clients, still grows each try."""
        ceiling = min(self.config.backoff_max_sec, self.config.backoff_base_sec * 2.0**attempt)
        return ceiling * (0.5 + 0.5 * self._rng.random())

    def _describe(self, error: openai.APIError, attempts: int) -> str:
        where = self.config.base_url or "api.openai.com"
        tries = f" (after {attempts} attempts)" if attempts > 1 else ""
        if isinstance(error, openai.APIStatusError):
            return f"{self.name} at {where}: HTTP {error.status_code}: {_server_message(error)}{tries}"
        return f"{self.name} at {where}: {error.message}{tries}"

    def _cost(self, data: Mapping[str, Any], usage: Usage) -> float:
        reported = provider_cost(data.get("usage"))
        if reported is not None:
            return reported
        if is_local_url(self.config.base_url):
            return 0.0
        return estimate_cost(
            self.name,
            base_url=self.config.base_url,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens,
        )


def _retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def _retry_after(error: openai.APIStatusError, cap: float) -> float:
    try:
        seconds = float(error.response.headers.get("retry-after", "0"))
    except ValueError:  # an HTTP date: rare enough to fall back on our own backoff
        return 0.0
    return min(max(seconds, 0.0), cap)


def _server_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return error.message
