"""``benchmarks/blind_guard.py``: the arms' settings, the round-robin schedule and the report for a chosen pair."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from autoenvscaling.agent.config import one_shot
from autoenvscaling.llm.base import Message, Sampling
from autoenvscaling.llm.scripted import ScriptedModel
from bench_module import BENCHMARKS, load_bench


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # it imports generation_yield as a sibling
    return load_bench("blind_guard")


def test_each_arm_changes_only_its_own_setting(bench: ModuleType) -> None:
    outputs = bench.arm_config("outputs", 10)
    assert outputs.outputs_before_submit == 2 and outputs.flag_reruns and outputs.max_turns == 10
    assert bench.arm_config("base", 10) == outputs.model_copy(update={"outputs_before_submit": 0})
    assert bench.arm_config("no-reruns", 10) == outputs.model_copy(update={"flag_reruns": False})
    assert bench.arm_config("cool", 10) == outputs and bench.ARMS["cool"][1] == 0.3
    oneshot, plain = bench.arm_config("oneshot", 10), bench.arm_config("oneshot-plain", 10)
    habits = bench.arm_config("oneshot-habits", 10)
    assert oneshot == one_shot(outputs) and oneshot.max_turns == 1
    for arm in (plain, habits):  # only the system prompt differs
        assert arm == oneshot.model_copy(
            update={"templates": {**oneshot.templates, "system.j2": arm.templates["system.j2"]}}
        )
    now = (Path(one_shot.__code__.co_filename).parent / "templates" / "oneshot_system.j2").read_text()
    assert plain.templates["system.j2"] == now  # the plain arm is today's prompt, written out
    assert habits.templates["system.j2"].replace(bench.HABITS, "") == now
    assert "Habits that avoid" in habits.templates["system.j2"] and "Habits" not in now


def test_tempered_sets_the_temperature_only_where_a_call_has_none(bench: ModuleType) -> None:
    model = ScriptedModel(["a", "b", "c"])
    tempered = bench.Tempered(model, 0.3)
    msgs = [Message(role="user", content="hi")]
    tempered.complete(msgs)
    tempered.complete(msgs, sampling=Sampling(temperature=1.0))  # a repeat's hotter sample wins
    tempered.complete(msgs, sampling=Sampling(stop=["x"]))
    assert [s.temperature if s else None for s in model.samplings] == [0.3, 1.0, 0.3]
    assert model.samplings[2] is not None and model.samplings[2].stop == ["x"]
    untouched = ScriptedModel(["a"])
    bench.Tempered(untouched, None).complete(msgs)
    assert untouched.samplings == [None] and tempered.name == model.name


def test_the_schedule_alternates_the_pair_and_the_report_compares_it(bench: ModuleType) -> None:
    cands = [Path("a"), Path("b")]
    order = bench.schedule(cands, 2, ("outputs", "cool"))
    assert [(a, c.name, arm) for a, c, arm in order] == [
        (1, "a", "outputs"), (1, "a", "cool"), (1, "b", "cool"), (1, "b", "outputs"),
        (2, "a", "cool"), (2, "a", "outputs"), (2, "b", "outputs"), (2, "b", "cool"),
    ]  # fmt: skip

    def rec(cand: str, arm: str, attempt: int, reward: float, **kw: Any) -> dict[str, Any]:
        base = {"exit_reason": "submitted", "turns": 3, "guard_refusals": 0, "wall_sec": 10.0}
        return {"candidate": cand, "arm": arm, "attempt": attempt, "reward": reward, **base, **kw}

    records = [rec("a", "outputs", 1, 0.0), rec("a", "cool", 1, 1.0, reruns=2), rec("a", "base", 1, 1.0)]
    out = bench.report(records, ("outputs", "cool"))
    assert (out["outputs"]["reproduced"], out["cool"]["reproduced"], out["cool"]["reruns"]) == (0, 1, 2)
    assert "fisher_p_cool_gt_outputs" in out and "base" not in out
