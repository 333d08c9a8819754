"""The scripted fake: replays, errors and delays on cue, computes replies, loads from a file."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from autoenvscaling.llm.base import Message, Model, ModelError, ModelResponse, ToolCall, Usage
from autoenvscaling.llm.scripted import ScriptedDelay, ScriptedError, ScriptedModel

ASK = [Message(role="user", content="what now?")]


def test_replays_in_order_and_records_histories() -> None:
    model = ScriptedModel(["first", "second"])
    assert isinstance(model, Model)
    assert model.complete(ASK).content == "first"
    assert model.complete([*ASK, Message(role="assistant", content="first")]).content == "second"
    assert [len(h) for h in model.calls] == [1, 2]


def test_exhaustion_is_loud() -> None:
    model = ScriptedModel(["only"])
    model.complete(ASK)
    with pytest.raises(ModelError, match="exhausted after 1 replies"):
        model.complete(ASK)


def test_usage_is_estimated_for_text_replies() -> None:
    response = ScriptedModel(["x" * 40]).complete([Message(role="user", content="y" * 80)])
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (20, 10)
    assert response.finish_reason == "stop" and response.model_name == "scripted"


def test_error_delay_and_full_responses() -> None:
    full = ModelResponse(
        tool_calls=[ToolCall(id="1", name="bash", arguments={"command": "ls"})], usage=Usage(cost_usd=1.0)
    )
    model = ScriptedModel([ScriptedError("endpoint down"), ScriptedDelay(0.01, "late"), full])
    with pytest.raises(ModelError, match="endpoint down"):
        model.complete(ASK)
    late = model.complete(ASK)
    assert late.content == "late" and late.usage.latency_sec >= 0.01
    assert model.complete(ASK) == full


def test_responder_computes_replies_from_history() -> None:
    model = ScriptedModel(responder=lambda history: f"turn {len(history)}")
    assert model.complete(ASK).content == "turn 1"
    assert model.complete(ASK * 3).content == "turn 3"


def test_thread_safe_replay() -> None:
    model = ScriptedModel([str(i) for i in range(100)])
    seen: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(25):
            reply = model.complete(ASK).content
            with lock:
                seen.append(reply)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen, key=int) == [str(i) for i in range(100)]


def test_from_file(tmp_path: Path) -> None:
    good = tmp_path / "replies.json"
    good.write_text(json.dumps(["a", "b"]))
    model = ScriptedModel.from_file(good)
    assert model.name == "scripted:replies.json"
    assert model.complete(ASK).content == "a"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(["a", 2]))
    with pytest.raises(ModelError, match="JSON list of reply strings"):
        ScriptedModel.from_file(bad)
    with pytest.raises(ModelError, match="cannot read"):
        ScriptedModel.from_file(tmp_path / "missing.json")
