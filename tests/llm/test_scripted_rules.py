"""Rules scripts: replies chosen per conversation, variants in turn, errors on cue, loaded from a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoenvscaling.llm.base import Message, ModelError
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.llm.scripted_rules import RuleResponder

SCRIPT = {
    "rules": [
        {"match": "sum the numbers", "variants": [["a1", "a2"], ["b1", "b2"]]},
        {"match": "^You build", "replies": ["p1", {"error": "endpoint down"}]},
    ],
    "default": ["submit"],
}


def convo(system: str, user: str, *said: str) -> list[Message]:
    msgs = [Message(role="system", content=system), Message(role="user", content=user)]
    for s in said:
        msgs += [Message(role="assistant", content=s), Message(role="user", content="output")]
    return msgs


def test_variants_go_round_and_later_turns_follow_their_variant(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(SCRIPT))
    model = ScriptedModel.from_file(path)
    first = [model.complete(convo("solver", "Please sum the numbers.")).content for _ in range(3)]
    assert first == ["a1", "b1", "a1"]
    # Interleaved conversations each get their own variant's next reply.
    assert model.complete(convo("solver", "Please sum the numbers.", "b1")).content == "b2"
    assert model.complete(convo("solver", "Please sum the numbers.", "a1")).content == "a2"
    assert model.name == "scripted:rules.json"


def test_a_fresh_model_starts_the_turns_again(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(SCRIPT))
    for _ in range(2):
        assert ScriptedModel.from_file(path).complete(convo("s", "sum the numbers")).content == "a1"


def test_rules_match_system_and_first_user_message_only() -> None:
    model = ScriptedModel(responder=RuleResponder.from_data(SCRIPT))
    assert model.complete(convo("You build environments.", "go")).content == "p1"
    with pytest.raises(ModelError, match="endpoint down"):
        model.complete(convo("You build environments.", "go", "p1"))
    # "sum the numbers" only in a later message: no rule, the default.
    msgs = [*convo("s", "hello", "x"), Message(role="user", content="sum the numbers")]
    assert model.complete(convo("s", "hello")).content == "submit"
    with pytest.raises(ModelError, match="exhausted after 1"):
        model.complete(msgs)


def test_bad_scripts_are_refused() -> None:
    with pytest.raises(ModelError, match="differ in their first reply"):
        RuleResponder.from_data({"rules": [{"match": "x", "variants": [["a", "b"], ["a", "c"]]}]})
    with pytest.raises(ModelError, match="no rule matches"):
        ScriptedModel(responder=RuleResponder.from_data({"rules": []})).complete(convo("s", "u"))
