"""`autoenv solve`/`eval` build the solver loop as the flywheel does: small-model guards for a small local model."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.roles import solver_factory
from autoenvscaling.roles.solver_factory import trial_agents

GUARD_KEYS = ("review_before_submit", "outputs_before_submit", "preview_inputs", "stop_after_block", "max_repeats")


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop's config is what these tests read: no model is opened."""

    @contextlib.contextmanager
    def fake(model: ModelConfig, loop: AgentConfig, *, remote: bool) -> Iterator[tuple[object, str]]:
        yield object, model.provider

    monkeypatch.setattr(solver_factory, "solver_agents", fake)


def _loop(model: str, guards: str) -> dict[str, object]:
    loop = {"max_turns": 7, "action_format": "bash_block"}
    with trial_agents("llm", model, loop, guards=guards) as (_factory, resolved):
        return dict(resolved["loop"])


def test_auto_guards_the_embedded_model_and_leaves_other_models_plain() -> None:
    embedded = _loop("embedded", "auto")
    assert [embedded[k] for k in GUARD_KEYS] == [True, 2, 3, True, 3]
    assert embedded["max_turns"] == 7  # the command line's values win over the guarded defaults
    named = _loop("Qwen/Qwen3-32B", "auto")
    assert [named[k] for k in GUARD_KEYS] == [False, 0, 0, False, None]


def test_on_and_off_override_the_policy() -> None:
    assert _loop("embedded", "off")["review_before_submit"] is False
    assert _loop("Qwen/Qwen3-32B", "on")["outputs_before_submit"] == 2


def test_an_unknown_guards_value_is_a_user_error() -> None:
    with pytest.raises(UserInputError, match="--guards 'sometimes'"):
        _loop("embedded", "sometimes")
