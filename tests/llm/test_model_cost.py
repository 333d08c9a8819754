"""Cost: provider-reported figures, genai-prices for known providers, 0 for local or unknown models."""

from __future__ import annotations

import pytest
from genai_prices import Usage, calc_price

from autoenvscaling.llm.cost import estimate_cost, is_local_url, provider_cost


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:8000/v1", True),
        ("http://10.1.2.3:8000/v1", True),
        ("http://192.168.0.5/v1", True),
        ("https://api.openai.com/v1", False),
        ("https://openrouter.ai/api/v1", False),
        (None, False),
    ],
)
def test_is_local_url(url: str | None, local: bool) -> None:
    assert is_local_url(url) is local


def test_provider_cost() -> None:
    assert provider_cost({"prompt_tokens": 3, "cost": 0.5}) == 0.5
    assert provider_cost({"prompt_tokens": 3}) is None
    assert provider_cost({"cost": "0.5"}) is None
    assert provider_cost({"cost": True}) is None
    assert provider_cost(None) is None


def test_known_model_priced_by_genai_prices() -> None:
    got = estimate_cost("gpt-4o-mini", base_url=None, prompt_tokens=1000, completion_tokens=500, cached_tokens=200)
    usage = Usage(input_tokens=1000, output_tokens=500, cache_read_tokens=200)
    expected = calc_price(usage, "gpt-4o-mini", provider_api_url="https://api.openai.com/v1").total_price
    assert got == pytest.approx(float(expected))
    assert got > 0
    uncached = estimate_cost("gpt-4o-mini", base_url=None, prompt_tokens=1000, completion_tokens=500)
    assert got < uncached  # cache reads are cheaper


def test_local_and_unknown_models_are_free() -> None:
    assert estimate_cost("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", prompt_tokens=10, completion_tokens=10) == 0
    assert (
        estimate_cost(
            "Qwen/Qwen2.5-7B-Instruct",
            base_url="http://gpu-node:8000/v1",
            prompt_tokens=10,
            completion_tokens=10,
        )
        == 0
    )
    assert estimate_cost("no-such-model-xyz", base_url=None, prompt_tokens=10, completion_tokens=10) == 0
