"""The quality probes counted per flywheel round (metrics.jsonl) and shown in report.html with the pool's counts."""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.flywheel.layout import RunPaths, write_output
from autoenvscaling.flywheel.metrics import MetricsOutput, compute_metrics
from autoenvscaling.flywheel.records import (
    AddRecord,
    CalibrateOutput,
    DedupOutput,
    EvaluateOutput,
    ProposeOutput,
    SolveOutput,
    TrainOutput,
    ValidateOutput,
)
from autoenvscaling.flywheel.report import write_report
from autoenvscaling.flywheel.stages_propose import probe_briefs
from autoenvscaling.pool import Pool
from autoenvscaling.validate.report import ProbeBrief, ProbeReport, ValidationReport, Verdict

SHIMS = ["hackable:conftest", "hackable:path-wrapper"]


def _report(name: str, verdict: Verdict, flags: list[str] | None, score: float | None = None) -> ValidationReport:
    probes = None if flags is None else ProbeReport(flags=flags, mutation_score=score)
    return ValidationReport(task_name=name, task_path=f"/x/candidates/{name}", verdict=verdict, probes=probes)


def _add(key: str, verdict: str, outcome: str | None) -> AddRecord:
    domain, pid = key.split("/")
    return AddRecord(key=key, domain=domain, proposal_id=pid, episode_dir="/x", candidate_dir="/x", verdict=verdict,
                     env_id=f"env-{pid}" if outcome else None, outcome=outcome)  # fmt: skip


def test_probe_briefs_are_keyed_like_the_pool_adds_and_skip_a_torn_line(tmp_path: Path) -> None:
    log = tmp_path / "terminal" / "validation" / "results.jsonl"
    log.parent.mkdir(parents=True)
    lines = [
        _report("p1", Verdict.VALID, [], 1.0),
        _report("p2", Verdict.INVALID, SHIMS),
        _report("p3", Verdict.ERROR, None),
    ]
    log.write_text("".join(r.model_dump_json() + "\n" for r in lines) + '{"task_name": "p4", "ver')
    briefs = probe_briefs(tmp_path / "terminal", "terminal")
    assert list(briefs) == ["terminal/p1", "terminal/p2", "terminal/p3"]
    assert briefs["terminal/p2"] == ProbeBrief(probed=True, flags=SHIMS)
    assert briefs["terminal/p3"] == ProbeBrief(probed=False)
    assert probe_briefs(tmp_path / "swe", "swe") == {}


def _round_metrics() -> MetricsOutput:
    briefs = {
        "t/p1": ProbeBrief(probed=True, flags=[], mutation_score=1.0),  # accepted
        "t/p2": ProbeBrief(probed=True, flags=SHIMS),  # hackable: invalid, stored but not accepted
        "t/p3": ProbeBrief(probed=True, flags=["weak-tests"], mutation_score=0.5),
        "t/p4": ProbeBrief(probed=False),  # an earlier check failed
        "t/p5": ProbeBrief(probed=True, flags=[], mutation_score=1.0),  # valid, a near-duplicate: not accepted
    }
    adds = [_add("t/p1", "valid", "added"), _add("t/p2", "invalid", "added"), _add("t/p3", "invalid", "added"),
            _add("t/p4", "invalid", "added"), _add("t/p5", "valid", "rejected")]  # fmt: skip
    m = compute_metrics(
        1, SolveOutput(round=1, stage="solve"), ProposeOutput(round=1, stage="propose"),
        ValidateOutput(round=1, stage="validate", probes=briefs), DedupOutput(round=1, stage="dedup", adds=adds),
        CalibrateOutput(round=1, stage="calibrate"), TrainOutput(round=1, stage="train"),
        EvaluateOutput(round=1, stage="evaluate"), pool_size=4, pool_learnable=0,
    )  # fmt: skip
    return MetricsOutput(round=1, stage="metrics", metrics=m)


def test_round_metrics_count_each_probe_and_the_hackable_share() -> None:
    m = _round_metrics().metrics
    assert (m.probes.validated, m.probes.probed, m.probes.hackable) == (5, 4, 1)
    assert m.probes.hackable_share == 0.25
    assert m.probes.flags == {"hackable:conftest": 1, "hackable:path-wrapper": 1, "weak-tests": 1}
    assert m.probes.mutation_score_mean == round(2.5 / 3, 3)
    assert (m.probes_accepted.probed, m.probes_accepted.hackable, m.probes_accepted.hackable_share) == (1, 0, 0.0)
    assert (m.added, m.kept_invalid, m.near_duplicates) == (1, 3, 1)  # invalid candidates the pool keeps: not added
    line = m.model_dump(mode="json")  # what metrics.jsonl holds
    assert line["probes"]["hackable_share"] == 0.25 and line["probes_accepted"]["flags"] == {}


def test_report_shows_round_and_pool_probe_counts(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path / "run")
    write_output(paths.stage_dir(1, "metrics"), _round_metrics())
    tasks = tmp_path / "tasks"
    for name in ("a", "b"):
        (tasks / name / "tests").mkdir(parents=True)
        (tasks / name / "task.toml").write_text(f'schema_version = "1.4"\n[task]\nname = "x/{name}"\n')
        (tasks / name / "instruction.md").write_text(f"Write {name * 40} to /app/{name}.txt.\n")
        (tasks / name / "tests" / "test.sh").write_text(f"#!/bin/bash\ngrep {name} /app/{name}.txt\n")
    with Pool.open(paths.default_pool) as pool:
        a, b = (pool.add(tasks / n, near_duplicate="ignore").id for n in ("a", "b"))
        pool.record_validation(a, _report("a", Verdict.VALID, [], 1.0))
        pool.record_validation(b, _report("b", Verdict.INVALID, SHIMS))
    page = write_report(paths).read_text()
    assert "<th>hackable / probed</th>" in page and "<th>probe flags</th>" in page
    assert "<td>1/4 (0.25)</td>" in page and "<td>0/1 (0.00)</td>" in page  # the round: all, accepted
    assert "hackable:conftest: 1, hackable:path-wrapper: 1, weak-tests: 1" in page
    assert "<td>all entries</td><td>2</td><td>2</td><td>1/2 (0.50)</td>" in page  # the pool
    assert "<td>accepted</td><td>1</td><td>1</td><td>0/1 (0.00)</td>" in page
    assert "accepted with the probes on carries none" in page  # that 0 is no measurement


def test_the_run_summary_table_shows_hackable_over_probed() -> None:
    from rich.console import Console

    from autoenvscaling.cli.flywheel_cmd import _table

    console = Console(record=True, width=200)
    console.print(_table([_round_metrics().metrics]))
    text = console.export_text()
    assert "hackable/probed" in text and "1/4" in text
