"""A trained checkpoint served in-process with transformers: ``hf:PATH`` (a LoRA adapter dir, a model dir, or a
GGUF file). Needs the ``train`` extra; nothing is imported before first use.

Why in-process: the flywheel's train stage writes a LoRA adapter, and on the CPU the next round must run it
without a conversion step (llama.cpp needs the adapter as GGUF, which only llama.cpp's own scripts write) or a
second server process to supervise across kills and resumes. The cost is speed: transformers on two cores
generates several times slower than the embedded llama.cpp server. On a GPU, serve the same adapter with vLLM
(``--enable-lora``) and point the flywheel at it as an OpenAI-compatible endpoint instead.

Replies go through the same parsing as an endpoint's (``openai_parse.parse_completion``): tool calls in
``<tool_call>`` tags or JSON blocks are read from the text. ``response_format`` is not enforced here (no
constrained decoding); callers that need it must validate, as they do for any endpoint.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.base import Message, ModelError, ModelResponse, Sampling, ToolSpec, seconds_left
from autoenvscaling.llm.openai_parse import parse_completion, to_wire_tools
from autoenvscaling.stopping import check_stop

BASE_RECORD = "autoenv_base.json"  # written next to a trained adapter: {"base_model": PATH}


def load_hf(base: str, adapter: str | None = None, dtype: str = "auto") -> tuple[Any, Any]:
    """(model, tokenizer) for a model dir or GGUF file, with ``adapter`` (a PEFT dir) applied; offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if dtype == "auto":
        torch_dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    else:
        torch_dtype = getattr(torch, dtype)
    path = Path(base)
    where, extra = (path.parent, {"gguf_file": path.name}) if path.suffix == ".gguf" else (path, {})
    tokenizer_src = adapter if adapter and (Path(adapter) / "tokenizer_config.json").is_file() else None
    if tokenizer_src:
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_src)
    else:
        tokenizer = AutoTokenizer.from_pretrained(where, **extra)
    model = AutoModelForCausalLM.from_pretrained(where, dtype=torch_dtype, **extra)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter)
    return model, tokenizer


def resolve_hf_path(path: Path) -> tuple[str, str | None]:
    """``hf:PATH`` -> (base, adapter): an adapter dir names its base in ``autoenv_base.json``."""
    if (path / "adapter_config.json").is_file():
        record = path / BASE_RECORD
        if not record.is_file():
            raise UserInputError(f"hf:{path}: an adapter dir without {BASE_RECORD} (which base model it trains)")
        return str(json.loads(record.read_text(encoding="utf-8"))["base_model"]), str(path)
    if path.is_dir() or path.suffix == ".gguf":
        return str(path), None
    raise UserInputError(f"hf:{path}: expected a LoRA adapter dir, a model dir or a .gguf file")


_MIN_GENERATION_SEC = 0.1  # past its deadline, a call still gets this long (its caller's limits end the run next)


class HfWeights:
    """One loaded model and tokenizer; generation on them is serialised."""

    def __init__(self, path: Path) -> None:
        base, adapter = resolve_hf_path(path)
        self.model, self.tokenizer = load_hf(base, adapter)
        self.model.eval()
        self.lock = threading.Lock()


class HfModel:
    """The ``Model`` protocol over shared ``HfWeights``, with the caller's sampling defaults."""

    def __init__(
        self, weights: HfWeights, name: str, *, max_tokens: int | None, temperature: float | None, top_p: float | None
    ) -> None:
        self.weights = weights
        self._name = name
        self._defaults = {"max_tokens": max_tokens or 1024, "temperature": temperature, "top_p": top_p}

    @property
    def name(self) -> str:
        return self._name

    @property
    def provider(self) -> str:
        return "hf"

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: Sampling | None = None,
    ) -> ModelResponse:
        check_stop()  # a run interrupted meanwhile: this thread stops before a new call
        import torch

        opts = {**self._defaults, **(sampling.model_dump(exclude_none=True) if sampling else {})}
        temperature = opts["temperature"]
        gen: dict[str, Any] = {"max_new_tokens": int(opts["max_tokens"]), "do_sample": bool(temperature)}
        if temperature:
            gen.update(temperature=float(temperature), top_p=opts["top_p"] or 1.0)
        if opts.get("stop"):
            gen.update(stop_strings=list(opts["stop"]), tokenizer=self.weights.tokenizer)
        started = time.perf_counter()
        model, tokenizer = self.weights.model, self.weights.tokenizer
        try:
            enc = tokenizer.apply_chat_template(
                _template_messages(messages), tools=to_wire_tools(tools) if tools else None,
                add_generation_prompt=True, return_dict=True, return_tensors="pt",
            )  # fmt: skip
            with self.weights.lock, torch.no_grad():
                if (left := seconds_left()) is not None:  # the caller's time runs out: stop with what there is
                    gen["max_time"] = max(_MIN_GENERATION_SEC, left)
                out = model.generate(**enc, **gen, pad_token_id=tokenizer.pad_token_id)
        except (RuntimeError, ValueError) as e:
            raise ModelError(f"{self._name}: generation failed: {e}") from None
        prompt_len = int(enc["input_ids"].shape[1])
        new = out[0][prompt_len:]
        text = tokenizer.decode(new, skip_special_tokens=True)
        finished = bool(len(new)) and int(new[-1]) == tokenizer.eos_token_id
        for stop in opts.get("stop") or []:  # generation ended on a stop string: it is not part of the reply
            if stop in text:
                text, finished = text[: text.index(stop)], True
        data = {
            "model": self._name,
            "choices": [{"message": {"content": text}, "finish_reason": "stop" if finished else "length"}],
            "usage": {"prompt_tokens": prompt_len, "completion_tokens": len(new)},
        }
        response = parse_completion(data, tool_names=[t.name for t in tools or []], fallback_name=self._name)
        usage = response.usage.model_copy(update={"latency_sec": time.perf_counter() - started})
        return response.model_copy(update={"usage": usage})


def _template_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        msg: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            msg["tool_calls"] = [
                {"type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in m.tool_calls
            ]
        out.append(msg)
    return out


_SHARED: dict[str, tuple[HfWeights, int]] = {}
_SHARED_LOCK = threading.Lock()


@contextlib.contextmanager
def shared_weights(path: Path) -> Iterator[HfWeights]:
    """One loaded copy per path while any caller holds it (the stages of a round share the weights)."""
    key = str(path.resolve())
    with _SHARED_LOCK:  # held while loading: a second opener waits for the first load instead of repeating it
        entry = _SHARED.get(key)
        weights = entry[0] if entry else HfWeights(path)
        _SHARED[key] = (weights, (entry[1] if entry else 0) + 1)
    try:
        yield weights
    finally:
        with _SHARED_LOCK:
            weights, count = _SHARED[key]
            if count <= 1:
                del _SHARED[key]
            else:
                _SHARED[key] = (weights, count - 1)
