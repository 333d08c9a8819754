"""GRPO's tool-call reading: TRL's tagged calls as before, plus the bare and fenced JSON calls small models write
(the tiny model's tokenizer carries Qwen2.5's chat template, as the embedded models do)."""

from __future__ import annotations

import pytest

pytest.importorskip("trl")
pytestmark = [
    pytest.mark.filterwarnings("ignore::FutureWarning:(transformers|peft|trl)"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:(transformers|peft|trl|torch)"),
]

CALL = '{"name": "bash", "arguments": {"command": "wc -w < text.txt"}}'


@pytest.fixture(scope="module")
def tokenizer():  # type: ignore[no-untyped-def]
    from autoenvscaling.train.tiny import tiny_model
    from autoenvscaling.train.toolcalls import read_bare_json_calls

    _, tok = tiny_model()
    return read_bare_json_calls(tok, ["bash"])


def _parse(tokenizer, text: str) -> dict:  # type: ignore[no-untyped-def]
    """As GRPO reads a completion: TRL's ``parse_response`` with the prompt as prefix."""
    from trl.chat_template_utils import parse_response

    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "Count the words."}],
                                           add_generation_prompt=True, tokenize=True, return_dict=False)  # fmt: skip
    completion = tokenizer(text + "<|im_end|>", add_special_tokens=False)["input_ids"]
    return parse_response(tokenizer, completion, prefix=list(prompt))


@pytest.mark.parametrize("text", [CALL, f"```json\n{CALL}\n```", f"<tool_call>\n{CALL}\n</tool_call>"])
def test_bare_fenced_and_tagged_calls_are_read(tokenizer, text: str) -> None:  # type: ignore[no-untyped-def]
    parsed = _parse(tokenizer, text)
    (call,) = parsed["tool_calls"]
    assert call["function"]["name"] == "bash"
    assert call["function"]["arguments"] == {"command": "wc -w < text.txt"}


@pytest.mark.parametrize(
    "text",
    ["The answer is 42.", '{"name": "python", "arguments": {"code": "1"}}', '{"answer": 42}', '{"name": "bash"'],
)
def test_text_and_other_json_stay_text(tokenizer, text: str) -> None:  # type: ignore[no-untyped-def]
    parsed = _parse(tokenizer, text)
    assert not parsed.get("tool_calls") and parsed["content"].strip() == text


def test_trainer_keeps_the_reader(tokenizer) -> None:  # type: ignore[no-untyped-def]
    # GRPOTrainer adds TRL's own response template only when the tokenizer has none; ours has one already.
    assert getattr(tokenizer, "response_template", None) is not None or tokenizer.response_schema is not None
