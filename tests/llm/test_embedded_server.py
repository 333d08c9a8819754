"""The real embedded 0.5B model on the CPU (``autoenv model install --size 0.5b`` first)."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

import pytest

from autoenvscaling.llm.base import Message, ModelError
from autoenvscaling.llm.config import parse_model_arg
from autoenvscaling.llm.embedded_server import EmbeddedServer
from autoenvscaling.llm.factory import open_model

pytestmark = pytest.mark.embedded_model

PROMPT = [
    Message(role="system", content="You are a terse assistant."),
    Message(role="user", content="What is the capital of France? Answer with one word."),
]


def test_greedy_completion_through_open_model() -> None:
    config = parse_model_arg("embedded:0.5b").model_copy(
        update={"temperature": 0.0, "max_tokens": 8, "embedded_ctx": 2048, "capture_token_ids": True}
    )
    with open_model(config) as model:
        first = model.complete(PROMPT)
        again = model.complete(PROMPT)

    assert "paris" in first.content.lower()
    assert first.model_name == "qwen2.5-coder-0.5b-instruct-q4_k_m"
    assert 0 < first.usage.completion_tokens <= 8 and first.usage.prompt_tokens > 10
    assert first.usage.cost_usd == 0.0
    assert first.completion_token_ids and len(first.completion_token_ids) == len(first.logprobs or [])
    assert again.content == first.content  # greedy is deterministic
    assert again.usage.cached_tokens > 0  # the shared prefix came from the KV cache


def test_concurrent_users_share_one_server() -> None:
    config = parse_model_arg("embedded:0.5b").model_copy(update={"max_tokens": 2, "embedded_ctx": 1024})
    with open_model(config) as outer, open_model(config) as inner:
        assert outer.config.base_url == inner.config.base_url  # type: ignore[attr-defined]
        assert inner.complete(PROMPT).usage.completion_tokens > 0
        base_url = inner.config.base_url  # type: ignore[attr-defined]
    assert base_url is not None
    with pytest.raises(urllib.error.URLError):  # stopped with its last user
        urllib.request.urlopen(f"{base_url}/models", timeout=5)


def test_busy_port_is_a_clear_error() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(ModelError, match=f"port {port} on 127.0.0.1 is already in use"):
            EmbeddedServer("0.5b", port=port, ctx_per_slot=1024).start()


def test_a_server_stopped_under_a_request_is_left_running_until_the_request_ends() -> None:
    # xllamacpp's destructor stops the inference loop and then joins the HTTP threads: a request under way never
    # got its answer, and a second Ctrl-C during a flywheel's solve stage hung the process for good.
    import threading
    import time

    from autoenvscaling.llm import embedded_server, inflight

    config = parse_model_arg("embedded:0.5b").model_copy(update={"max_tokens": 96, "embedded_ctx": 1024})
    server = EmbeddedServer("0.5b", ctx_per_slot=1024).start()
    server.stop_wait_sec = 0.2
    served = {"provider": "openai", "base_url": server.base_url, "name": server.model_name}
    with open_model(config.model_copy(update=served)) as model:
        answers: list[str] = []
        asking = threading.Thread(
            target=lambda: answers.append(model.complete([Message(role="user", content="Count from 1 to 60.")]).content)
        )
        asking.start()
        deadline = time.monotonic() + 60
        while not inflight.under_way(server.base_url):  # the request is under way (a loaded machine: not at once)
            assert time.monotonic() < deadline and asking.is_alive()
            time.sleep(0.01)
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 5 and embedded_server.abandoned() == 1
        asking.join(120)  # the server it was sent to still answers it
        assert answers and answers[0]
    assert embedded_server.abandoned() == 0  # destroyed once its request ended
