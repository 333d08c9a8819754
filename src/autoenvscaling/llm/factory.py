"""``open_model``: the model a ``ModelConfig`` names, ready to call (the one place that knows every provider)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from autoenvscaling.llm.base import Model
from autoenvscaling.llm.config import ModelConfig


@contextlib.contextmanager
def open_model(config: ModelConfig) -> Iterator[Model]:
    """The model ``config`` names, ready to call; an embedded server runs while the block runs.

    Concurrent ``open_model`` calls for the same embedded model share one server.
    """
    if config.provider == "scripted":
        from autoenvscaling.llm.scripted import ScriptedModel

        assert config.scripted_path is not None  # checked by the validator
        yield ScriptedModel.from_file(config.scripted_path)
        return
    if config.provider == "hf":
        from autoenvscaling.llm.hf_model import HfModel, shared_weights

        assert config.hf_path is not None  # checked by the validator
        with shared_weights(config.hf_path) as weights:
            yield HfModel(weights, config.name or f"hf:{config.hf_path}", max_tokens=config.max_tokens,
                          temperature=config.temperature, top_p=config.top_p)  # fmt: skip
        return
    from autoenvscaling.llm.openai_model import OpenAIModel

    if config.provider == "openai":
        with contextlib.closing(OpenAIModel(config)) as model:
            yield model
        return
    from autoenvscaling.llm.embedded_server import shared_server

    with (
        shared_server(
            config.embedded_size,
            model_path=config.embedded_path,
            parallel=config.embedded_parallel,
            ctx_per_slot=config.embedded_ctx,
        ) as server,
        contextlib.closing(
            OpenAIModel(config.model_copy(update={"name": server.model_name, "base_url": server.base_url}))
        ) as model,
    ):
        yield model
