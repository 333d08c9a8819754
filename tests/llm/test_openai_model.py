"""OpenAIModel against a scripted local HTTP server: retries, usage, tool calls, token ids, cost."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from fake_openai_server import FakeOpenAI, FakeReply, chat_body, error_body

from autoenvscaling.llm.base import Message, Model, ModelError, ToolCall, ToolSpec
from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.llm.openai_model import OpenAIModel

BASH = ToolSpec(
    name="bash",
    description="run a command",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}},
)
HELLO = [Message(role="user", content="hello")]


class SleepRecorder:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def make_model(url: str, sleep: SleepRecorder | None = None, **overrides: Any) -> OpenAIModel:
    config = ModelConfig(provider="openai", name="fake-model", base_url=url, **overrides)
    return OpenAIModel(config, sleep=sleep or SleepRecorder())


def test_plain_completion_with_usage_and_cached_tokens(fake_openai: FakeOpenAI) -> None:
    usage = {
        "prompt_tokens": 120,
        "completion_tokens": 7,
        "total_tokens": 127,
        "prompt_tokens_details": {"cached_tokens": 100},
    }
    fake_openai.reply(chat_body("hi there", usage=usage))
    model = make_model(fake_openai.url)
    assert isinstance(model, Model)

    response = model.complete(HELLO)

    assert response.content == "hi there"
    assert response.finish_reason == "stop"
    assert response.model_name == "fake-model"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (120, 7)
    assert response.usage.cached_tokens == 100
    assert response.usage.latency_sec > 0
    assert response.usage.cost_usd == 0.0  # a local endpoint
    assert response.prompt_token_ids is None and response.logprobs is None
    assert fake_openai.requests[0].path == "/v1/chat/completions"


def test_request_carries_sampling_tools_format_and_history(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(chat_body())
    model = make_model(
        fake_openai.url,
        temperature=0.2,
        top_p=0.9,
        max_tokens=64,
        seed=7,
        extra_body={"top_k": 20},
    )
    history = [
        Message(role="system", content="be brief"),
        Message(role="user", content="list files"),
        Message(role="assistant", tool_calls=[ToolCall(id="c1", name="bash", arguments={"command": "ls"})]),
        Message(role="tool", content="a.txt", tool_call_id="c1"),
    ]
    schema = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}

    model.complete(history, tools=[BASH], response_format=schema)

    sent = fake_openai.requests[0].body
    assert sent["model"] == "fake-model"
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"], sent["seed"]) == (0.2, 0.9, 64, 7)
    assert sent["top_k"] == 20
    assert sent["response_format"] == schema
    assert sent["tools"] == [{"type": "function", "function": BASH.model_dump()}]
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "tool"]
    call = sent["messages"][2]["tool_calls"][0]
    assert call == {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
    }
    assert sent["messages"][3]["tool_call_id"] == "c1"
    assert "logprobs" not in sent and "return_token_ids" not in sent


def test_unset_sampling_fields_are_not_sent(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(chat_body())
    make_model(fake_openai.url, max_tokens=None).complete(HELLO)
    sent = fake_openai.requests[0].body
    assert not {"temperature", "top_p", "max_tokens", "seed", "tools", "response_format"} & set(sent)


def test_retries_5xx_with_growing_backoff(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(
        FakeReply(500, error_body("boom", 500)),
        FakeReply(502, error_body("bad gateway", 502)),
        FakeReply(503, error_body("busy", 503)),
        chat_body("finally"),
    )
    sleep = SleepRecorder()
    model = make_model(fake_openai.url, sleep, backoff_base_sec=1.0, backoff_max_sec=60.0)

    assert model.complete(HELLO).content == "finally"

    assert len(fake_openai.requests) == 4
    assert len(sleep.delays) == 3
    for attempt, delay in enumerate(sleep.delays):  # jitter keeps each delay in [50%, 100%] of 2^attempt
        assert 0.5 * 2**attempt <= delay <= 2**attempt


def test_backoff_is_capped(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(*[FakeReply(500, error_body("x", 500))] * 3, chat_body())
    sleep = SleepRecorder()
    make_model(fake_openai.url, sleep, backoff_base_sec=10.0, backoff_max_sec=12.0).complete(HELLO)
    assert all(d <= 12.0 for d in sleep.delays) and sleep.delays[-1] >= 6.0


def test_429_is_retried_and_retry_after_respected(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(FakeReply(429, error_body("slow down", 429), headers={"Retry-After": "7"}), chat_body())
    sleep = SleepRecorder()
    make_model(fake_openai.url, sleep, backoff_base_sec=0.1).complete(HELLO)
    assert len(fake_openai.requests) == 2
    assert sleep.delays == [7.0]


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_4xx_fail_at_once_with_server_message(fake_openai: FakeOpenAI, status: int) -> None:
    fake_openai.reply(FakeReply(status, error_body(f"'max_tokens' is too large ({status})", status)))
    sleep = SleepRecorder()
    with pytest.raises(ModelError) as caught:
        make_model(fake_openai.url, sleep).complete(HELLO)
    assert f"HTTP {status}" in str(caught.value)
    assert f"'max_tokens' is too large ({status})" in str(caught.value)
    assert len(fake_openai.requests) == 1
    assert sleep.delays == []


def test_gives_up_after_max_retries(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(*[FakeReply(503, error_body("overloaded", 503))] * 5)
    sleep = SleepRecorder()
    with pytest.raises(ModelError, match=r"HTTP 503: overloaded \(after 3 attempts\)"):
        make_model(fake_openai.url, sleep, max_retries=2).complete(HELLO)
    assert len(fake_openai.requests) == 3
    assert len(sleep.delays) == 2


def test_connection_errors_are_retried() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleep = SleepRecorder()
    model = make_model(f"http://127.0.0.1:{port}/v1", sleep, max_retries=2)
    with pytest.raises(ModelError, match="after 3 attempts"):
        model.complete(HELLO)
    assert len(sleep.delays) == 2


def test_request_timeout_is_a_retryable_connection_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(FakeReply(body=chat_body("late"), delay_sec=2.0), chat_body("on time"))
    sleep = SleepRecorder()
    model = make_model(fake_openai.url, sleep, timeout_sec=0.3, max_retries=1)
    assert model.complete(HELLO).content == "on time"
    assert len(sleep.delays) == 1


def test_native_tool_calls_are_parsed(fake_openai: FakeOpenAI) -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "ls -la"}'},
            },
            {"id": "call_b", "type": "function", "function": {"name": "bash", "arguments": "{not json"}},
        ],
    }
    body = chat_body()
    body["choices"][0].update(message=message, finish_reason="tool_calls")
    fake_openai.reply(body)

    response = make_model(fake_openai.url).complete(HELLO, tools=[BASH])

    assert response.content == ""
    assert response.finish_reason == "tool_calls"
    assert response.tool_calls[0] == ToolCall(id="call_a", name="bash", arguments={"command": "ls -la"})
    assert response.tool_calls[1].arguments == {"_raw": "{not json"}  # left for the agent to report


def test_tool_call_written_in_content_is_recovered(fake_openai: FakeOpenAI) -> None:
    content = '```json\n{"name": "bash", "arguments": {"command": "mkdir /tmp/x"}}\n```'
    fake_openai.reply(chat_body(content), chat_body(content), chat_body(content))

    with_tools = make_model(fake_openai.url).complete(HELLO, tools=[BASH])
    without_tools = make_model(fake_openai.url).complete(HELLO)
    switched_off = make_model(fake_openai.url, text_tool_calls=False).complete(HELLO, tools=[BASH])

    assert [(c.name, c.arguments) for c in with_tools.tool_calls] == [("bash", {"command": "mkdir /tmp/x"})]
    assert with_tools.content == content
    assert without_tools.tool_calls == [] and switched_off.tool_calls == []


def test_token_ids_and_logprobs_vllm_style(fake_openai: FakeOpenAI) -> None:
    body = chat_body("ab", prompt_token_ids=[1, 2, 3])
    body["choices"][0]["token_ids"] = [10, 11]
    body["choices"][0]["logprobs"] = {
        "content": [
            {"token": "a", "logprob": -0.5, "bytes": [97], "top_logprobs": []},
            {"token": "b", "logprob": -0.25, "bytes": [98], "top_logprobs": []},
        ]
    }
    fake_openai.reply(body)

    response = make_model(fake_openai.url, capture_token_ids=True).complete(HELLO)

    sent = fake_openai.requests[0].body
    assert sent["logprobs"] is True and sent["top_logprobs"] == 1 and sent["return_token_ids"] is True
    assert response.prompt_token_ids == [1, 2, 3]
    assert response.completion_token_ids == [10, 11]
    assert response.logprobs == [-0.5, -0.25]


def test_token_ids_from_llamacpp_logprob_entries(fake_openai: FakeOpenAI) -> None:
    body = chat_body("Hi!", timings={"cache_n": 40, "prompt_n": 8, "predicted_n": 2})
    del body["usage"]
    body["choices"][0]["logprobs"] = {
        "content": [
            {"id": 13048, "token": "Hi", "logprob": -1.5, "bytes": [72, 105], "top_logprobs": []},
            {"id": 0, "token": "!", "logprob": -0.1, "bytes": [33], "top_logprobs": []},
        ]
    }
    fake_openai.reply(body)

    response = make_model(fake_openai.url, capture_token_ids=True).complete(HELLO)

    assert response.completion_token_ids == [13048, 0]
    assert response.logprobs == [-1.5, -0.1]
    assert (response.usage.prompt_tokens, response.usage.cached_tokens, response.usage.completion_tokens) == (
        48,
        40,
        2,
    )


def test_cached_tokens_from_timings_when_details_missing(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(chat_body(usage={"prompt_tokens": 50, "completion_tokens": 3}, timings={"prompt_n": 12}))
    assert make_model(fake_openai.url).complete(HELLO).usage.cached_tokens == 38


def test_provider_reported_cost_wins(fake_openai: FakeOpenAI) -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12, "cost": 0.0123}
    fake_openai.reply(chat_body(usage=usage))
    assert make_model(fake_openai.url).complete(HELLO).usage.cost_usd == pytest.approx(0.0123)


def test_reasoning_content_is_kept(fake_openai: FakeOpenAI) -> None:
    body = chat_body("42")
    body["choices"][0]["message"]["reasoning_content"] = "6 times 7"
    fake_openai.reply(body)
    assert make_model(fake_openai.url).complete(HELLO).reasoning_content == "6 times 7"


def test_empty_choices_is_a_model_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(chat_body(choices=[]))
    with pytest.raises(ModelError, match="no choices"):
        make_model(fake_openai.url).complete(HELLO)


def test_missing_api_key_for_openai_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelError, match=r"\$MY_KEY"):
        OpenAIModel(ModelConfig(provider="openai", name="gpt-4o-mini", api_key_env="MY_KEY"))


def test_api_key_is_read_from_the_named_variable(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-test-123")
    fake_openai.reply(chat_body())
    make_model(fake_openai.url, api_key_env="MY_KEY").complete(HELLO)
    headers = {k.lower(): v for k, v in fake_openai.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer sk-test-123"


def test_base_url_from_environment(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_openai.reply(chat_body("from env"))
    model = OpenAIModel(ModelConfig(provider="openai", name="fake-model"), sleep=SleepRecorder())
    assert model.config.base_url == fake_openai.url
    assert model.complete(HELLO).content == "from env"
