"""``--model`` parsing, ``ModelConfig`` validation and ``open_model`` for each provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAI, chat_body
from pydantic import ValidationError

from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.base import Message, ModelNotInstalledError
from autoenvscaling.llm.config import ModelConfig, parse_model_arg
from autoenvscaling.llm.factory import open_model
from autoenvscaling.llm.openai_model import OpenAIModel
from autoenvscaling.llm.scripted import ScriptedModel


@pytest.fixture(autouse=True)
def _no_ambient_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_embedded_defaults_to_1_5b() -> None:
    config = parse_model_arg("embedded")
    assert (config.provider, config.embedded_size, config.embedded_path) == ("embedded", "1.5b", None)


@pytest.mark.parametrize("value", ["embedded:0.5b", "embedded:0.5B", " embedded:0.5b "])
def test_embedded_small(value: str) -> None:
    assert parse_model_arg(value).embedded_size == "0.5b"


def test_embedded_local_gguf(tmp_path: Path) -> None:
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF")
    assert parse_model_arg(f"embedded:{gguf}").embedded_path == gguf
    with pytest.raises(UserInputError, match="no such file"):
        parse_model_arg(f"embedded:{tmp_path / 'missing.gguf'}")


@pytest.mark.parametrize("value", ["embedded:3b", "embedded:large", ""])
def test_bad_values_are_user_errors(value: str) -> None:
    with pytest.raises(UserInputError):
        parse_model_arg(value)


def test_scripted(tmp_path: Path) -> None:
    config = parse_model_arg(f"scripted:{tmp_path / 'replies.json'}")
    assert config.provider == "scripted"
    assert config.scripted_path == tmp_path / "replies.json"
    with pytest.raises(UserInputError):
        parse_model_arg("scripted:")


def test_anything_else_is_an_openai_compatible_name(monkeypatch: pytest.MonkeyPatch) -> None:
    config = parse_model_arg("meta-llama/llama-3.1-8b-instruct:free", base_url="https://openrouter.ai/api/v1")
    assert (config.provider, config.name) == ("openai", "meta-llama/llama-3.1-8b-instruct:free")
    assert config.base_url == "https://openrouter.ai/api/v1"
    assert parse_model_arg("gpt-4o-mini").base_url is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gpu-node:8000/v1")
    assert parse_model_arg("Qwen/Qwen2.5-7B-Instruct").base_url == "http://gpu-node:8000/v1"
    assert parse_model_arg("x", base_url="http://other/v1").base_url == "http://other/v1"


def test_config_validation() -> None:
    with pytest.raises(ValidationError, match="scripted_path"):
        ModelConfig(provider="scripted")
    with pytest.raises(ValidationError, match="model name"):
        ModelConfig(provider="openai")
    with pytest.raises(ValidationError):
        ModelConfig.model_validate({"provider": "embedded", "temprature": 0.5})  # typo: extra forbidden
    with pytest.raises(ValidationError):
        ModelConfig.model_validate({"embedded_size": "7b"})


def test_config_round_trips_through_json() -> None:
    config = ModelConfig(provider="openai", name="m", base_url="http://h/v1", temperature=0.3, extra_body={"a": 1})
    assert ModelConfig.model_validate_json(config.model_dump_json()) == config


def test_open_scripted(tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["one", "two"]))
    with open_model(parse_model_arg(f"scripted:{replies}")) as model:
        assert isinstance(model, ScriptedModel)
        assert model.complete([Message(role="user", content="?")]).content == "one"


def test_open_openai_compatible(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(chat_body("pong"))
    with open_model(parse_model_arg("fake-model", base_url=fake_openai.url)) as model:
        assert isinstance(model, OpenAIModel)
        assert model.name == "fake-model"
        assert model.complete([Message(role="user", content="ping")]).content == "pong"


def test_open_embedded_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOENV_CACHE_DIR", str(tmp_path))
    with (
        pytest.raises(ModelNotInstalledError, match=r"autoenv model install --size 0\.5b"),
        open_model(parse_model_arg("embedded:0.5b")),
    ):
        pass
