"""Which parent each staged episode starts from (``parents.parent_schedule``): the shortest solutions in turn
without a history, else the one whose children were accepted most often; the record names it, and the run's
history carries it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from combine_parents import make_parent

from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.proposer.domain import DomainContext, domain_context
from autoenvscaling.roles.proposer.records import GenerationStats, ProposalRecord, ValidationStats
from autoenvscaling.roles.proposer.run import ProposeConfig, ProposeRun
from autoenvscaling.roles.proposer.staged.parents import (
    Parent,
    children_made,
    load_parent,
    parent_history,
    parent_schedule,
    solution_lines,
)
from autoenvscaling.sandbox.fake import FakeBackend


def _parents(tmp: Path, *names: str) -> list[Parent]:
    loaded = [load_parent(make_parent(tmp, n)) for n in names]
    assert all(p is not None for p in loaded)
    return [p for p in loaded if p is not None]


def _record(parent: str | None, verdict: str, episode: Path | None = None) -> ProposalRecord:
    return ProposalRecord(id="x", mode="staged", domain="terminal", episode_dir=str(episode or "/x"),
                          candidate_dir=None, verdict=verdict, generation=GenerationStats(),
                          validation=ValidationStats(), parent=parent)  # fmt: skip


def test_without_a_history_the_parents_are_taken_in_turn(tmp_path: Path) -> None:
    parents = _parents(tmp_path, "a", "b", "c")
    assert parent_schedule(parents, {}, 7) == [0, 1, 2, 0, 1, 2, 0]
    assert parent_schedule([], {}, 0) == []


def test_a_parent_with_a_longer_solution_is_tried_after_the_short_ones_fell_below_its_prior(tmp_path: Path) -> None:
    five = "#!/bin/bash\n" + "".join(f"echo {i} >> /app/ips.txt\n" for i in range(5))
    short, long_ = (_parents(tmp_path / d, "s") for d in ("a", "b"))
    parents = [*short, *(p.model_copy(update={"name": "long", "solve_sh": five}) for p in long_)]
    assert [solution_lines(p) for p in parents] == [1, 5]
    # priors 1/2 and 1/10: the short parent at 1/(k+2) until it ties 1/10 after 8 episodes; the tie goes to "long"
    assert parent_schedule(parents, {}, 10) == [0] * 8 + [1, 0]
    # children accepted of the long parent outweigh its prior
    assert parent_schedule(parents, {"long": (2, 2), "s": (4, 0)}, 1) == [1]
    # a domain pack whose parents are all long is taken in turn, as before
    assert parent_schedule([parents[1], parents[1].model_copy(update={"name": "l2"})], {}, 3) == [0, 1, 0]


def test_the_parent_whose_children_were_accepted_most_often_goes_first(tmp_path: Path) -> None:
    parents = _parents(tmp_path, "a", "b", "c")
    # v13-v16's staged arm: 0 of 20 from a, 6 of 15 from b, c never tried
    history = {"a": (20, 0), "b": (15, 6)}
    # c (untried: 1/2) first, then b (7/17) until its pending tries bring it under c's 1/3 after one failure
    assert parent_schedule(parents, history, 4) == [2, 1, 1, 1]
    # a tie goes to the less tried parent: b and c at 1/2, c never tried
    assert parent_schedule(parents, {"b": (2, 1)}, 2) == [0, 2]


def test_the_history_counts_accepted_children_and_skips_infrastructure_errors() -> None:
    records = [_record("a", "valid"), _record("a", "invalid"), _record("b", "no-candidate"),
               _record("b", "error"), _record(None, "valid")]  # fmt: skip
    assert parent_history(records) == {"a": (2, 1), "b": (1, 0)}


def test_a_run_starts_each_episode_from_its_scheduled_parent_and_records_it(
    tmp_path: Path, terminal_domain: DomainContext
) -> None:
    pool = [make_parent(tmp_path / "pool", n) for n in ("first", "second")]
    config = ProposeConfig(mode="staged", n=3, parents=pool, parent_history={"first": (4, 0), "second": (4, 3)})
    model = ScriptedModel(["not an idea"] * 12)  # every episode ends at its idea: no Docker work
    run = ProposeRun(tmp_path / "out", FakeBackend(), model, terminal_domain, config)
    results = run.generate()
    names = [p.name for p in run.parents]
    assert names[:2] == ["first", "second"] and "worked-example" in names
    # second (4/6, then 4/7) twice; at 4/8 it ties with the untried worked example (1/2), the less tried one
    assert [g.parent for g in results] == ["second", "second", "worked-example"]
    assert all(g.failed_checks == ["idea-unparseable"] for g in results)
    records = run.validate(results)
    assert parent_history(records) == {"second": (2, 0), "worked-example": (1, 0)}


def test_a_flywheel_round_takes_the_history_of_the_rounds_before_it(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from pydantic import TypeAdapter

    from autoenvscaling.flywheel.layout import RunPaths
    from autoenvscaling.flywheel.stages_propose import _parent_record

    paths = RunPaths(tmp_path / "run")
    episode = _episode(tmp_path / "ep", "Keep the lines with status 404")
    rounds = {1: [_record("a", "valid", episode), _record("b", "invalid")], 2: [_record("a", "invalid")],
              3: [_record("b", "valid")]}  # fmt: skip
    for n, records in rounds.items():
        done = paths.stage_dir(n, "validate") / "terminal" / "records.json"
        done.parent.mkdir(parents=True)
        done.write_bytes(TypeAdapter(list[ProposalRecord]).dump_json(records))
    ctx = SimpleNamespace(n=3, paths=paths)  # round 3's own records are not its history
    assert _parent_record(ctx, "terminal") == {  # type: ignore[arg-type]
        "parent_history": {"a": (2, 1), "b": (1, 0)},
        "parent_children": {"a": ["Keep the lines with status 404"]},
    }
    assert _parent_record(ctx, "swe") == {"parent_history": {}, "parent_children": {}}  # type: ignore[arg-type]


def _episode(path: Path, change: str) -> Path:
    path.mkdir(parents=True)
    idea = {"operator": "filter", "change": change, "output_file": "/app/o.txt", "compare": "exact"}
    (path / "staged.json").write_text(json.dumps({"parent": "a", "idea": idea}))
    return path


def test_the_parents_accepted_children_are_what_an_idea_must_not_ask_again_and_the_prompt_does_not_list_them(
    tmp_path: Path, terminal_domain: DomainContext
) -> None:
    # v20: the staged arm made "less than 400" of the worked example twice in a row; v21, shown a list of what was
    # made, the model asked a listed sentence again 9 times in 12: the list is the check's, not the prompt's
    records = [
        _record("a", "valid", _episode(tmp_path / "1", "Keep the lines with status less than 400")),
        _record("a", "invalid", _episode(tmp_path / "2", "Keep the lines with status 500")),  # not accepted
        _record("a", "valid", _episode(tmp_path / "3", "Keep the lines with status less than 400")),  # once
        _record("b", "valid"),  # no staged.json: nothing to show
    ]
    made = children_made(records)
    assert made == {"a": ["Keep the lines with status less than 400"]}
    config = ProposeConfig(mode="staged", n=1, parent_history={"worked-example": (3, 3)},
                           parent_children={"worked-example": made["a"]})  # fmt: skip
    model = ScriptedModel(["not an idea"] * 2)
    ProposeRun(tmp_path / "out", FakeBackend(), model, terminal_domain, config).generate()
    prompt = model.calls[0][-1].content
    assert "Make ONE new task from the parent" in prompt
    assert "less than 400" not in prompt and "already made" not in prompt


def test_the_record_names_the_parent_the_episode_was_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An idea may build on the second parent instead (staged.json and the lineage say so); the schedule counts the
    # parent given, else one whose episodes always switch stays untried and is scheduled again and again (v18).
    from autoenvscaling.roles.proposer import run as run_module
    from autoenvscaling.roles.proposer.records import GenerationResult

    def switched(*_a: object, episode_dir: Path, task_id: str, **_k: object) -> GenerationResult:
        return GenerationResult(id=task_id, mode="staged", episode_dir=str(episode_dir), parent="log-error-summary")

    monkeypatch.setattr(run_module, "run_staged_episode", switched)
    config = ProposeConfig(mode="staged", n=2)
    domain = domain_context("terminal")  # the pack's parents: the worked example, its starters, the examples
    results = ProposeRun(tmp_path / "out", FakeBackend(), ScriptedModel([]), domain, config).generate()
    # the pack's one-line solutions in turn, neither the switched one
    assert [g.parent for g in results] == ["worked-example", "app-config"]


def test_a_run_s_later_episodes_are_told_what_its_earlier_ones_made_from_their_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autoenvscaling.roles.proposer import run as run_module
    from autoenvscaling.roles.proposer.records import GenerationResult

    told: list[list[str]] = []
    changes = ["Keep the lines with status 404", "Keep the lines with status 500", "Count the lines"]

    def episode(_m: object, _b: object, ctx: object, *, episode_dir: Path, candidate_dir: Path, task_id: str,
                **_k: object) -> GenerationResult:  # fmt: skip
        told.append(list(ctx.made))  # type: ignore[attr-defined]
        k = len(told) - 1
        episode_dir.mkdir(parents=True)
        (episode_dir / "staged.json").write_text(
            json.dumps({"parent": "worked-example", "idea": {"change": changes[k]}}), encoding="utf-8"
        )
        if k != 1:  # the second episode ends without a candidate: what it asked was not made
            candidate_dir.mkdir(parents=True)
        return GenerationResult(id=task_id, mode="staged", episode_dir=str(episode_dir))

    monkeypatch.setattr(run_module, "run_staged_episode", episode)
    config = ProposeConfig(mode="staged", n=3, parent_history={"worked-example": (4, 4)},
                           parent_children={"worked-example": ["Keep the lines with status 200"]})  # fmt: skip
    ProposeRun(tmp_path / "out", FakeBackend(), ScriptedModel([]), domain_context("terminal"), config).generate()
    earlier = ["Keep the lines with status 200"]
    assert told == [earlier, [*earlier, changes[0]], [*earlier, changes[0]]]


def test_an_idea_the_parent_s_children_already_asked_is_sampled_again_from_the_same_prompt(
    tmp_path: Path, terminal_domain: DomainContext
) -> None:
    from autoenvscaling.roles.proposer.staged.parents import made_already

    made = ["Filter the logs to only include requests with status code 400 or 500."]
    assert made_already("filter the logs to only include requests with status code 400 or 500", made) == made[0]
    assert made_already("Only include requests with status code 404", made) is None
    assert (
        made_already("Keep the lines with status greater than 400", ["Keep the lines with status less than 400"])
        is None
    )

    def idea(change: str) -> str:
        return json.dumps({"operator": "filter", "change": change, "output_file": "/app/r.txt", "compare": "exact"})

    again = made[0].lower()
    for replies, chosen, told in (
        ([idea(again), idea("Keep the requests for /login")], "Keep the requests for /login", 1),
        ([idea(again), idea(made[0]), idea("Keep the 404s")], "Keep the 404s", 2),
        ([idea(again), idea(again), idea(made[0])], made[0], 2),  # sampled twice more: the last answer stands
        ([idea(again), "not an idea", "not an idea"], again, 1),  # no other answer: the repeat stands
    ):
        config = ProposeConfig(mode="staged", n=1, parent_children={"worked-example": made})
        model = ScriptedModel(replies)
        out = tmp_path / str(len(replies)) / chosen[:4]
        (result,) = ProposeRun(out, FakeBackend(), model, terminal_domain, config).generate()
        idea_prompts = [c[-1].content for c in model.calls[: len(replies)]]
        assert len(set(idea_prompts)) == 1  # the same prompt each time: a fresh sample, not a hint to copy
        log = json.loads((Path(result.episode_dir) / "staged.json").read_text())
        assert log["idea"]["change"] == chosen
        steps = json.loads((Path(result.episode_dir) / "trajectory.json").read_text())["steps"]
        assert sum("already made from this parent" in str(st["message"]) for st in steps) == told


def test_an_idea_that_repeats_an_operator_s_description_is_sampled_again(
    tmp_path: Path, terminal_domain: DomainContext
) -> None:
    """Two first proposals of the 66937ae demo series answered with the filter operator's own line of the idea
    prompt; one became the instruction word for word."""
    from autoenvscaling.roles.proposer.staged.spec import OPERATOR_HELP

    def idea(change: str, operator: str = "filter") -> str:
        return json.dumps({"operator": operator, "change": change, "output_file": "/app/r.txt", "compare": "exact"})

    echo = OPERATOR_HELP["filter"]
    for replies, chosen, told in (
        ([idea(echo), idea("Keep the requests for /login")], "Keep the requests for /login", 1),
        ([idea(OPERATOR_HELP["aggregation"].upper(), "aggregation"), idea("Count the 404s", "aggregation")],
         "Count the 404s", 1),  # another operator's line, in capitals
        ([idea(echo), idea(echo + "."), idea(echo)], echo, 2),  # sampled twice more: the last answer stands
        ([idea("Select the lines whose status differs from 200")], "Select the lines whose status differs from 200",
         0),  # an idea of its own that shares some of the line's words
    ):  # fmt: skip
        config = ProposeConfig(mode="staged", n=1)
        model = ScriptedModel(replies)
        out = tmp_path / str(len(replies)) / chosen[:4]
        (result,) = ProposeRun(out, FakeBackend(), model, terminal_domain, config).generate()
        log = json.loads((Path(result.episode_dir) / "staged.json").read_text())
        assert log["idea"]["change"] == chosen
        steps = json.loads((Path(result.episode_dir) / "trajectory.json").read_text())["steps"]
        assert sum("description of an operator" in str(st["message"]) for st in steps) == told
