"""What a call cost: the provider's own figure when it reports one, else ``genai-prices``, else 0.

Self-hosted endpoints (the embedded server, vLLM or SGLang on a cluster) are not in any price list, and
the model name alone must not price them as if they were a commercial API: only a base URL that
``genai-prices`` recognises as a provider gets a price. No base URL means the official OpenAI API.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlparse

OPENAI_API_URL = "https://api.openai.com/v1"


def is_local_url(base_url: str | None) -> bool:
    """A loopback or private-network endpoint: priced at 0 without a lookup."""
    if not base_url:
        return False
    host = urlparse(base_url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def provider_cost(usage: Mapping[str, object] | None) -> float | None:
    """The cost the endpoint itself reported (OpenRouter: ``usage.cost`` in USD), if any."""
    if not usage:
        return None
    cost = usage.get("cost")
    if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
        return float(cost)
    return None


def estimate_cost(
    model: str,
    *,
    base_url: str | None,
    prompt_tokens: int,
    completion_tokens: int,
    cached_tokens: int = 0,
) -> float:
    """USD for one call from ``genai-prices``' offline tables; 0 for local or unknown models."""
    if is_local_url(base_url) or not model:
        return 0.0
    from genai_prices import Usage, calc_price  # imported lazily: loads a sizeable price snapshot

    usage = Usage(  # input_tokens counts cache reads too, as OpenAI's prompt_tokens does
        input_tokens=prompt_tokens,
        output_tokens=completion_tokens,
        cache_read_tokens=min(cached_tokens, prompt_tokens),
    )
    try:
        price = calc_price(usage, model, provider_api_url=base_url or OPENAI_API_URL)
    except (LookupError, ValueError):  # LookupError: provider or model not in the tables
        return 0.0
    return float(price.total_price)
