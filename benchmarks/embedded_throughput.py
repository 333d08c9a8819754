"""Throughput of the embedded model: OpenAIModel vs a raw HTTP request, and prefix-cache reuse.

    .venv/bin/python benchmarks/embedded_throughput.py --size 0.5b --tokens 128 --repeats 3

1. Generates ``--tokens`` tokens greedily (``ignore_eos``) the same way through ``OpenAIModel`` and through
   a bare ``urllib`` POST, alternating, and prints tok/s for each and the overhead ratio.
2. Runs a growing 10-turn conversation (append-only history) and prints, per turn, the prompt size and
   the tokens the server actually evaluated (``timings.prompt_n``): with the KV cache reused, only the new
   turn's tokens are evaluated.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import urllib.request
from typing import Any

from autoenvscaling.llm.base import Message
from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.llm.embedded_server import EmbeddedServer
from autoenvscaling.llm.openai_model import OpenAIModel
from autoenvscaling.llm.openai_parse import to_wire_messages

PROMPT = [
    Message(role="system", content="You are a helpful coding assistant."),
    Message(role="user", content="Write a long, detailed tutorial on shell scripting with many examples."),
]
QUESTIONS = [
    "How do I list files sorted by size?",
    "How do I count lines in all .py files?",
    "How do I find files changed in the last day?",
    "How do I replace a word in many files?",
    "How do I check if a port is open?",
    "How do I extract a tar.gz archive?",
    "How do I show disk usage per directory?",
    "How do I run a command every 5 seconds?",
    "How do I kill a process by name safely?",
    "How do I make a script exit on the first error?",
]


def raw_chat(base_url: str, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=3600) as response:
        data: dict[str, Any] = json.loads(response.read())
    return data, time.perf_counter() - started


def call_overhead(server: EmbeddedServer, repeats: int) -> None:
    """Per-call cost of each client path on a request the server answers almost for free."""
    config = ModelConfig(provider="openai", name=server.model_name, base_url=server.base_url, max_tokens=1)
    model = OpenAIModel(config)
    body = {"model": server.model_name, "messages": to_wire_messages(PROMPT), "max_tokens": 1}
    raw_chat(server.base_url, body)  # prompt now cached: each call evaluates ~1 token
    via_model: list[float] = []
    via_raw: list[float] = []
    for _ in range(repeats):
        via_model.append(model.complete(PROMPT).usage.latency_sec)
        via_raw.append(raw_chat(server.base_url, body)[1])
    model.close()
    m, r = statistics.median(via_model) * 1000, statistics.median(via_raw) * 1000
    print(f"\n== one-token call, cached prompt, median of {repeats} ==")
    print(f"OpenAIModel {m:7.1f} ms   raw HTTP {r:7.1f} ms   client overhead {m - r:+.1f} ms per call")


def generation(server: EmbeddedServer, tokens: int, repeats: int) -> None:
    config = ModelConfig(
        provider="openai",
        name=server.model_name,
        base_url=server.base_url,
        temperature=0.0,
        max_tokens=tokens,
        extra_body={"ignore_eos": True},  # exactly `tokens` tokens on both paths
    )
    model = OpenAIModel(config)
    body = {
        "model": server.model_name,
        "messages": to_wire_messages(PROMPT),
        "temperature": 0.0,
        "max_tokens": tokens,
        "ignore_eos": True,
    }
    raw_chat(server.base_url, body)  # warm-up: loads pages, fills the prompt cache for both paths
    via_model: list[float] = []
    via_raw: list[float] = []
    server_rates: list[float] = []
    for _ in range(repeats):
        response = model.complete(PROMPT)
        via_model.append(response.usage.completion_tokens / response.usage.latency_sec)
        data, seconds = raw_chat(server.base_url, body)
        via_raw.append(data["usage"]["completion_tokens"] / seconds)
        server_rates.append(float(data.get("timings", {}).get("predicted_per_second", 0.0)))
    model.close()
    m, r = statistics.median(via_model), statistics.median(via_raw)
    print(f"\n== greedy generation of {tokens} tokens, median of {repeats} ({server.model_name}) ==")
    print(f"OpenAIModel   {m:7.2f} tok/s   {[round(x, 2) for x in via_model]}")
    print(f"raw HTTP      {r:7.2f} tok/s   {[round(x, 2) for x in via_raw]}")
    print(f"server decode {statistics.median(server_rates):7.2f} tok/s   (llama.cpp timings, no HTTP)")
    print(f"overhead ratio raw/OpenAIModel = {r / m:.3f}")


def conversation(server: EmbeddedServer, turns: int, reply_tokens: int) -> None:
    history = list(PROMPT[:1])
    print(f"\n== growing {turns}-turn conversation (append-only history, {reply_tokens}-token replies) ==")
    print(f"{'turn':>4} {'prompt':>7} {'evaluated':>9} {'cached':>7} {'prompt s':>9}")
    for turn, question in enumerate(QUESTIONS[:turns], start=1):
        history.append(Message(role="user", content=question))
        body = {
            "messages": to_wire_messages(history),
            "temperature": 0.0,
            "max_tokens": reply_tokens,
        }
        data, _ = raw_chat(server.base_url, body)
        timings = data.get("timings", {})
        usage = data.get("usage", {})
        cached = usage.get("prompt_tokens_details", {}).get("cached_tokens", timings.get("cache_n", "?"))
        print(
            f"{turn:>4} {usage.get('prompt_tokens', '?'):>7} {timings.get('prompt_n', '?'):>9} {cached:>7} "
            f"{timings.get('prompt_ms', 0.0) / 1000:>9.2f}"
        )
        history.append(Message(role="assistant", content=data["choices"][0]["message"]["content"] or ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="0.5b", choices=["0.5b", "1.5b"])
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--reply-tokens", type=int, default=48)
    args = parser.parse_args()
    started = time.perf_counter()
    with EmbeddedServer(args.size, ctx_per_slot=8192) as server:
        took = time.perf_counter() - started
        print(f"server up in {took:.1f}s at {server.base_url} ({server.n_threads} threads)")
        call_overhead(server, repeats=20)
        generation(server, args.tokens, args.repeats)
        conversation(server, args.turns, args.reply_tokens)


if __name__ == "__main__":
    main()
