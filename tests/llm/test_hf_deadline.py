"""``HfModel`` stops generating at the caller's deadline (transformers' ``max_time``), whatever its token budget."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

from autoenvscaling.llm.base import Message, generation_deadline

torch = pytest.importorskip("torch")
hf_model = pytest.importorskip("autoenvscaling.llm.hf_model")


class _Tokenizer:
    eos_token_id = 2
    pad_token_id = 0

    def apply_chat_template(self, messages: list[dict[str, Any]], **_: Any) -> dict[str, Any]:
        return {"input_ids": torch.tensor([[5, 6, 7]])}

    def decode(self, ids: Any, skip_special_tokens: bool = True) -> str:
        return "```bash\necho hi\n```"


class _Model:
    def __init__(self) -> None:
        self.kwargs: list[dict[str, Any]] = []

    def generate(self, **kw: Any) -> Any:
        self.kwargs.append(kw)
        return torch.tensor([[5, 6, 7, 9, 9]])


def _model() -> tuple[Any, _Model]:
    import threading

    net = _Model()
    weights = SimpleNamespace(model=net, tokenizer=_Tokenizer(), lock=threading.Lock())
    return hf_model.HfModel(weights, "tiny", max_tokens=4096, temperature=0.0, top_p=None), net


def test_generation_gets_the_time_left_before_the_deadline_and_no_limit_without_one() -> None:
    model, net = _model()
    messages = [Message(role="user", content="hi")]
    model.complete(messages)
    with generation_deadline(time.monotonic() + 30):
        model.complete(messages)
    with generation_deadline(time.monotonic() - 5):  # already past: a short last call, the caller's limits end the run
        model.complete(messages)
    assert "max_time" not in net.kwargs[0]
    assert 29 < net.kwargs[1]["max_time"] <= 30
    assert net.kwargs[2]["max_time"] == pytest.approx(0.1)
    assert all(kw["max_new_tokens"] == 4096 for kw in net.kwargs)
