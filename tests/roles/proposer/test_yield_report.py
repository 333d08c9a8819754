"""``benchmarks/generation_yield.py``'s statistics: the Wilson interval's ends, and the cost per valid environment
with its 95% bounds, where a baseline without any valid environment still bounds the cost ratio."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType

import pytest

from bench_module import load_bench


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("generation_yield")


def test_the_wilson_interval_is_exact_at_its_ends(bench: ModuleType) -> None:
    assert bench.wilson(0, 11)[0] == 0.0 and bench.wilson(11, 11)[1] == 1.0
    lo, hi = bench.wilson(4, 11)
    assert lo == pytest.approx(0.152, abs=1e-3) and hi == pytest.approx(0.646, abs=1e-3)
    assert bench.wilson(0, 0) == (0.0, 1.0)


def test_cost_per_valid_bounds(bench: ModuleType) -> None:
    # 10 items cost $1: at a valid rate between 0.2 and 0.5, a valid one costs between $0.20 and $0.50
    assert bench.per_valid_interval(1.0, 10, 0.2, 0.5) == pytest.approx([0.2, 0.5])
    assert bench.per_valid_interval(1.0, 10, 0.0, 0.25) == [pytest.approx(0.4), None]  # no valid one: at least
    assert bench.per_valid_interval(0.0, 10, 0.1, 0.5) == [None, None]


def test_items_missing_from_the_log_are_recovered_from_the_run_dir(bench: ModuleType, tmp_path: Path) -> None:
    from autoenvscaling.roles.proposer.records import GenerationStats, ProposalRecord, ValidationStats

    out = tmp_path / "out"
    for arm, i, verdict in (("A1", 0, "invalid"), ("P1", 0, "no-candidate"), ("A1", 1, "error")):
        record = ProposalRecord(
            id=f"x-{i}",
            mode="staged",
            domain="terminal",
            episode_dir=str(tmp_path / "ep"),
            candidate_dir=None,
            verdict=verdict,
            generation=GenerationStats(wall_sec=10.0),
            validation=ValidationStats(wall_sec=2.0, reproduce_wall_sec=30.0),
        )
        (out / arm / f"{i:03d}").mkdir(parents=True)
        (out / arm / f"{i:03d}" / "results.jsonl").write_text(record.model_dump_json() + "\n")
    log = tmp_path / "items.jsonl"
    logged = bench.Item(arm="P1", index=0, record=record.model_copy(update={"verdict": "invalid"}), cpu_sec=5.0,
                        wall_sec=1.0)  # fmt: skip
    log.write_text(logged.model_dump_json() + "\n")
    args = argparse.Namespace(n=2, out=out, recover="abc1234")
    bench.recover_items(args, ["A1", "P1"], bench.load_items(log), log)
    items = bench.load_items(log)
    # P1 #0 was in the log already; A1 #1's record is an infrastructure error: no item
    assert [(i.arm, i.index, i.record.verdict) for i in items] == [("P1", 0, "invalid"), ("A1", 0, "invalid")]
    assert items[1].cpu_sec is None and items[1].wall_sec == 42.0 and items[1].code == "abc1234"
    stats = bench.arm_stats(items[1:], "gpt-4.1-mini", 0.8)
    assert stats["cpu_unknown_items"] == 1 and stats["cpu_per_valid_sec"] is None


def test_every_arm_takes_the_parent_the_lead_arms_earlier_items_chose(bench: ModuleType, tmp_path: Path) -> None:
    from autoenvscaling.roles.proposer.records import GenerationStats, ProposalRecord, ValidationStats

    def item(arm: str, i: int, parent: str, verdict: str) -> object:
        candidate = tmp_path / f"{arm}-{i}"
        candidate.mkdir()
        record = ProposalRecord(id=f"x-{i}", mode="staged", domain="terminal", episode_dir="/x",
                                candidate_dir=str(candidate), verdict=verdict, generation=GenerationStats(),
                                validation=ValidationStats(), parent=parent)  # fmt: skip
        return bench.Item(arm=arm, index=i, record=record, cpu_sec=1.0, wall_sec=1.0)

    items = [item("A1", 0, "a", "valid"), item("P1", 0, "a", "no-candidate"), item("A1", 1, "b", "invalid"),
             item("P1", 1, "b", "valid"), item("A1", 2, "a", "invalid")]  # fmt: skip
    # A1 leads whichever order the arms run in
    assert bench.lead_history(items, ["P1", "A1"], 2) == {"a": (1, 1), "b": (1, 0)}
    assert bench.lead_history(items, ["A1", "P1"], 0) == {}
    # a baseline continued alone past A1's items starts where A1 would; in a series without A1, P1 leads
    assert bench.lead_history(items, ["P1"], 2) == {"a": (1, 1), "b": (1, 0)}
    assert bench.lead_history(items, ["P1"], 9) == {"a": (2, 1), "b": (1, 0)}
    without_a1 = [it for it in items if it.arm != "A1"]
    assert bench.lead_history(without_a1, ["P1"], 2) == {"a": (1, 0), "b": (1, 1)}
    assert bench.lead_history(without_a1, ["P0"], 2) == {}  # no arm starts from parents: no history
    assert bench.parents_line(items, "A1") == "a 1/2, b 0/1"
    # each arm's earlier valid candidates are its references: a later one must not copy them
    record = bench.parent_record(items, ["A1", "P1"], "P1", 2)
    assert record["parent_history"] == {"a": (1, 1), "b": (1, 0)}
    assert record["references"] == [tmp_path / "P1-1"]
    assert bench.parent_record(items, ["A1", "P1"], "A1", 2)["references"] == [tmp_path / "A1-0"]


def test_distinct_valid_items_ask_for_different_answers(bench: ModuleType) -> None:
    from autoenvscaling.roles.proposer.records import GenerationStats, ProposalRecord, ValidationStats

    def item(i: int, instruction: str, answer: str | None) -> object:
        record = ProposalRecord(
            id=f"x-{i}", mode="staged", domain="terminal", episode_dir="/x", candidate_dir=None, verdict="valid",
            generation=GenerationStats(), validation=ValidationStats(),
        )  # fmt: skip
        return bench.Item(
            arm="A1", index=i, record=record, cpu_sec=1.0, wall_sec=1.0, instruction=instruction,
            grading=f"grading {i} " * 3, answer=answer,
        )  # fmt: skip

    items = [
        item(0, "Select lines where the status code is less than 400.", "k1"),
        item(1, "Write only the lines whose status code is below 400 to the file.", "k1"),  # the same answer
        item(2, "Keep the lines with status 404, in input order.", "k2"),
        item(3, "Keep the lines with status 404, in input order.", None),  # the same words
        item(4, "Count the requests per method, one count per line.", None),
    ]
    assert [it.index for it in bench.distinct_valid(items, 0.8)] == [0, 2, 4]


def test_the_sections_arm_is_the_one_shot_baseline_answering_in_fenced_blocks(bench: ModuleType) -> None:
    from autoenvscaling.roles.proposer.config import ProposerConfig

    base = ProposerConfig(max_turns=15)
    assert bench.ARMS["P1s"] == bench.ARMS["P1"] == "prompt-recorded"
    assert bench.arm_proposer(base, "P1s").staged.oneshot_format == "sections"
    assert bench.arm_proposer(base, "P1") == base and base.staged.oneshot_format == "json"
