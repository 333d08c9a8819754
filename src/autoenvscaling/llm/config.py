"""Which model to use and how to call it: ``ModelConfig`` and the CLI's ``--model`` syntax (``factory.open_model``
opens one).

``--model`` values::

    embedded              the embedded Qwen2.5-Coder-1.5B (default), served in-process
    embedded:0.5b         the faster, weaker 0.5B
    embedded:PATH.gguf    any local GGUF, served the same way
    scripted:PATH.json    replay a JSON list of replies (tests, demos)
    hf:PATH               a trained LoRA adapter dir (or a model dir / GGUF), served in-process with transformers
    anything-else         a model name on an OpenAI-compatible endpoint (--base-url / OPENAI_BASE_URL)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.embedded_server import DEFAULT_CTX_PER_SLOT
from autoenvscaling.llm.embedded_specs import DEFAULT_SIZE, SPECS, EmbeddedSize

Provider = Literal["embedded", "openai", "scripted", "hf"]


class ModelConfig(BaseModel):
    """How to reach a model and sample from it. ``None`` sampling fields leave the server's default."""

    model_config = ConfigDict(extra="forbid")

    provider: Provider = "embedded"
    name: str = Field(default="", description="model name sent to the endpoint (openai); empty = derived")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint; None = api.openai.com")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="environment variable holding the API key")
    temperature: float | None = None
    max_tokens: int | None = 1024
    top_p: float | None = None
    seed: int | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict, description="merged into every request")
    timeout_sec: float = Field(default=600.0, gt=0, description="per request; CPU models are slow")
    max_retries: int = Field(default=4, ge=0, description="on 429, 5xx and connection errors only")
    backoff_base_sec: float = Field(default=1.0, ge=0)
    backoff_max_sec: float = Field(default=60.0, ge=0)
    capture_token_ids: bool = Field(default=False, description="request logprobs + token ids (vLLM, llama.cpp)")
    text_tool_calls: bool = Field(default=True, description="read tool calls written as JSON in the content")
    embedded_size: EmbeddedSize = DEFAULT_SIZE
    embedded_path: Path | None = Field(default=None, description="serve this GGUF instead of an installed size")
    embedded_parallel: int = Field(default=1, ge=1, description="concurrent requests the embedded server serves")
    embedded_ctx: int = Field(default=DEFAULT_CTX_PER_SLOT, ge=256, description="context tokens per slot")
    scripted_path: Path | None = None
    hf_path: Path | None = Field(default=None, description="provider hf: adapter dir, model dir or .gguf")

    @model_validator(mode="after")
    def _check_provider_fields(self) -> ModelConfig:
        if self.provider == "scripted" and self.scripted_path is None:
            raise ValueError("provider 'scripted' needs scripted_path")
        if self.provider == "hf" and self.hf_path is None:
            raise ValueError("provider 'hf' needs hf_path")
        if self.provider == "openai" and not self.name:
            raise ValueError("provider 'openai' needs a model name")
        return self


def parse_model_arg(s: str, *, base_url: str | None = None) -> ModelConfig:
    """Turn a ``--model`` value into a config; ``base_url`` falls back to ``$OPENAI_BASE_URL``."""
    value = s.strip()
    kind, _, rest = value.partition(":")
    if not value:
        raise UserInputError("--model: empty value")
    if kind == "embedded":
        return _embedded_config(rest)
    if kind == "scripted":
        if not rest:
            raise UserInputError("--model scripted:PATH.json needs a path")
        return ModelConfig(provider="scripted", name=f"scripted:{Path(rest).name}", scripted_path=Path(rest))
    if kind == "hf":
        if not rest:
            raise UserInputError("--model hf:PATH needs a path (a trained adapter dir, a model dir or a .gguf)")
        return ModelConfig(provider="hf", name=f"hf:{rest}", hf_path=Path(rest).expanduser())
    url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    return ModelConfig(provider="openai", name=value, base_url=url)


def _embedded_config(rest: str) -> ModelConfig:
    if not rest:
        return ModelConfig(provider="embedded")
    if rest.lower() in SPECS:
        return ModelConfig(provider="embedded", embedded_size=rest.lower())  # type: ignore[arg-type]
    if rest.endswith(".gguf"):
        path = Path(rest).expanduser()
        if not path.is_file():
            raise UserInputError(f"--model embedded:{rest}: no such file")
        return ModelConfig(provider="embedded", embedded_path=path)
    raise UserInputError(f"--model embedded:{rest}: expected one of {', '.join(SPECS)} or a .gguf path")
