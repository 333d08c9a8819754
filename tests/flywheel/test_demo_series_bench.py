"""``benchmarks/demo_series.py``: runs recorded once each, resumed by the flywheel, failures recorded as nothing,
and the report's count (one commit, runs with infrastructure errors left out)."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from bench_module import BENCHMARKS, load_bench

SCRIPTED = BENCHMARKS.parent / "examples" / "flywheel" / "scripted.toml"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # it imports generation_yield as a sibling
    return load_bench("demo_series")


def _args(tmp_path: Path, n: int, *overrides: str) -> argparse.Namespace:
    return argparse.Namespace(
        n=n, config=SCRIPTED, set=list(overrides), out=tmp_path / "runs", log=tmp_path / "log.jsonl"
    )


def test_each_run_is_recorded_once_and_a_second_call_runs_nothing(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _args(tmp_path, 2, "backend=fake", "rounds=1")  # the fake sandbox: every trial is an error
    assert bench.run_series(args, "abc1234") == 0
    lines = bench.load_log(args.log)
    assert [x["index"] for x in lines] == [0, 1] and {x["code"] for x in lines} == {"abc1234"}
    first = lines[0]
    assert (
        first["proposals"] == 2
        and first["n_accepted"] == 0
        and first["valid"] == 0
        and first["errors"] > 0
        and not first["resumed"]
    )
    assert (tmp_path / "runs" / "abc1234" / "run-1" / "metrics.jsonl").is_file()

    assert bench.run_series(args, "abc1234") == 0
    assert len(bench.load_log(args.log)) == 2
    assert "0 run(s) to go" in capsys.readouterr().out

    summary = bench.report(lines, "abc1234", (3, 5))
    assert summary["runs"] == 0 and summary["runs_with_errors"] == 2  # errors are no sample either way
    assert summary["target"]["verdict"].startswith("open")


def test_a_run_dir_that_holds_a_run_is_resumed(bench: ModuleType, tmp_path: Path) -> None:
    rdir = bench.run_dir(tmp_path, "abc1234", 0)
    assert rdir == tmp_path / "abc1234" / "run-0"  # another commit's run 0 is another dir
    assert bench.flywheel_command(SCRIPTED, rdir, ["rounds=1"])[4:6] == ["run", "--config"]
    rdir.mkdir(parents=True)
    (rdir / "config.resolved.toml").write_text("")
    assert bench.flywheel_command(SCRIPTED, rdir, ["rounds=1"])[4:] == ["resume", str(rdir)]


def test_a_flywheel_that_fails_records_nothing(bench: ModuleType, tmp_path: Path) -> None:
    args = _args(tmp_path, 1, "backend=fake", "rounds=many")
    assert bench.run_series(args, "abc1234") != 0
    assert bench.load_log(args.log) == []


def _line(index: int, added: int, code: str = "abc1234", errors: int = 0) -> dict[str, Any]:
    return {
        "index": index, "code": code, "date": "2026-12-05T01:00:00+00:00", "wall_sec": 600.0, "resumed": False,
        "load": [1.0, 2.0], "n_accepted": added, "proposals": 2, "by_verdict": {"valid": added},
        "pass_rate_heldout": None, "errors": errors,
        "accepted": [{"status": "learnable", "pass_rate": 0.5, "headline": "Keep the 404 lines."}] * added,
    }  # fmt: skip


def test_the_target_counts_the_first_runs_of_one_commit(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [_line(4, 1), _line(0, 1), _line(1, 0), _line(2, 1, errors=1), _line(3, 0), _line(5, 1), _line(0, 1, "zzz")]
    summary = bench.report(lines, "abc1234", (3, 5))
    # clean runs in index order: 0 (hit), 1, 3, 4 (hit), 5 (hit): 3 of the first 5
    assert summary["runs"] == 5 and summary["accepted_runs"] == 3 and summary["target"]["verdict"] == "met"
    assert summary["runs_with_errors"] == 1 and summary["other_codes"] == ["zzz"]
    out = capsys.readouterr().out
    assert "3 of 5 runs accepted" in out and "learnable (0.50): Keep the 404 lines." in out
    assert bench.report([*lines[:3], _line(3, 0), _line(5, 0)], "abc1234", (3, 5))["target"]["verdict"] == "not met"


def test_the_code_is_the_last_commit_that_changed_src_or_examples(bench: ModuleType) -> None:
    code = bench.code_version()
    assert code != "unknown" and len(code.removesuffix("-dirty")) >= 7
