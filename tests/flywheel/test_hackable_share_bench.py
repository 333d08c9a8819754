"""``benchmarks/hackable_share.py``: the gate's counts per round, accepted environments logged once with what a
reader needs, audits by reading and by newer probes, and the residual share against the target."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import tomli_w

from autoenvscaling.flywheel.config import FlywheelConfig
from autoenvscaling.flywheel.layout import RunPaths, write_output
from autoenvscaling.flywheel.records import CalibrateOutput, ValidateOutput
from autoenvscaling.pool import Pool
from autoenvscaling.pool.calibration import CalibrationRecord
from autoenvscaling.pool.models import Calibration, EnvStatus
from autoenvscaling.roles.proposer.records import GenerationStats, ProposalRecord, ValidationStats
from autoenvscaling.validate.report import (
    CheckResult,
    ExploitResult,
    ProbeBrief,
    ProbeReport,
    ValidationReport,
    Verdict,
)
from bench_module import BENCHMARKS, load_bench

EXAMPLE = BENCHMARKS.parent / "examples" / "terminal" / "log-error-summary"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # it imports demo_series and generation_yield as siblings
    return load_bench("hackable_share")


def _record(pid: str, verdict: str, failed: list[str]) -> ProposalRecord:
    return ProposalRecord(id=pid, mode="staged", domain="terminal", episode_dir="/x", candidate_dir=None,
                          verdict=verdict, failed_checks=failed, generation=GenerationStats(),
                          validation=ValidationStats())  # fmt: skip


def _validate_output(n: int) -> ValidateOutput:
    return ValidateOutput(
        round=n,
        stage="validate",
        records=[
            _record("a", "valid", []),
            _record("b", "invalid", ["not-reproduced"]),  # passed the probes, failed later
            _record("c", "invalid", ["hackable:empty-files"]),
            _record("d", "no-candidate", ["hackable:instruction-answer"]),  # the proposer's own check caught it
            _record("e", "invalid", ["oracle"]),  # the probes never ran
            _record("f", "invalid", ["weak-tests"]),
        ],
        probes={
            "terminal/a": ProbeBrief(probed=True),
            "terminal/b": ProbeBrief(probed=True),
            "terminal/c": ProbeBrief(probed=True, flags=["hackable:empty-files"]),
            "terminal/e": ProbeBrief(),
            "terminal/f": ProbeBrief(probed=True, flags=["weak-tests"]),
        },
    )


def test_the_gate_counts_the_proposals_the_probes_judged_and_flagged(bench: ModuleType) -> None:
    got = bench.gate(_validate_output(1))
    assert got == {
        "judged": 5,  # a, b, c, f in the validate stage; d in the proposer's check; e never reached them
        "hackable": 2,  # weak tests are a flag, not a way to pass without the task
        "flags": {"hackable:empty-files": 1, "hackable:instruction-answer": 1, "weak-tests": 1},
    }


def _report(exploits: list[str]) -> ValidationReport:
    return ValidationReport(
        task_name="t",
        task_path="/t",
        verdict=Verdict.VALID,
        checks=[CheckResult(id="oracle", passed=True), CheckResult(id="hackable:empty-files", passed=True)],
        probes=ProbeReport(exploits=[ExploitResult(name=e) for e in exploits], mutation_score=1.0),
    )


def _run_dir(tmp_path: Path) -> Path:
    """A flywheel run dir of one finished round that accepted the example task (calibrated learnable)."""
    paths = RunPaths(tmp_path / "run")
    paths.root.mkdir()
    paths.config.write_text(tomli_w.dumps(FlywheelConfig().to_toml_dict()))
    with Pool.open(paths.default_pool) as pool:
        env_id = pool.add(EXAMPLE, domain="terminal", round=1).id
        pool.record_validation(env_id, _report(["empty-files", "instruction-answer"]))
        pool.set_status(env_id, EnvStatus.LEARNABLE)
    write_output(paths.stage_dir(1, "validate"), _validate_output(1))
    calibration = Calibration(attempts=2, passes=1)
    record = CalibrationRecord(env_id=env_id, calibration=calibration, status=EnvStatus.LEARNABLE)
    write_output(paths.stage_dir(1, "calibrate"), CalibrateOutput(round=1, stage="calibrate", calibrations=[record]))
    paths.metrics.write_text('{"round": 1}\n')
    return paths.root


def test_a_run_is_tallied_once_with_what_a_reader_needs(bench: ModuleType, tmp_path: Path) -> None:
    rdir, log = _run_dir(tmp_path), tmp_path / "log.jsonl"
    assert bench.tally(rdir, "abc1234", log) == (1, 1)
    assert bench.tally(rdir, "abc1234", log) == (0, 0)  # the same run again adds nothing
    rounds = [x for x in bench.load_log(log) if x["kind"] == "round"]
    (env,) = [x for x in bench.load_log(log) if x["kind"] == "env"]
    assert rounds[0]["judged"] == 5 and rounds[0]["run"].startswith("run@") and rounds[0]["code"] == "abc1234"
    assert env["status"] == "learnable" and env["pass_rate"] == 0.5 and env["probed"] and env["flags"] == []
    assert env["probe_set"] == ["exploit:empty-files", "exploit:instruction-answer", "hackable:empty-files"]
    assert env["instruction"] == (EXAMPLE / "instruction.md").read_text()
    assert env["solve_sh"].startswith("#!") and env["dockerfile"].startswith("FROM")
    assert env["inputs"] and all(not name.endswith("Dockerfile") for name in env["inputs"])


def test_a_run_without_a_finished_validation_is_not_tallied(bench: ModuleType, tmp_path: Path) -> None:
    paths = RunPaths(tmp_path / "run")
    paths.root.mkdir()
    paths.config.write_text(tomli_w.dumps(FlywheelConfig().to_toml_dict()))
    assert bench.tally(paths.root, "abc1234", tmp_path / "log.jsonl") == (0, 0)
    assert not (tmp_path / "log.jsonl").exists()
    write_output(paths.stage_dir(1, "validate"), _validate_output(1))  # validated, but the round not finished
    assert bench.tally(paths.root, "abc1234", tmp_path / "log.jsonl") == (0, 0)


def test_verdicts_name_one_logged_environment_and_say_how(bench: ModuleType, tmp_path: Path) -> None:
    rdir, log = _run_dir(tmp_path), tmp_path / "log.jsonl"
    bench.tally(rdir, "abc1234", log)
    env_id = bench.load_log(log)[-1]["env_id"]
    assert bench.parse_verdict(f"{env_id[:6]}=ok") == (env_id[:6], "ok", "")
    assert bench.parse_verdict("x=hackable: the example line is the answer") == (
        "x",
        "hackable",
        "the example line is the answer",
    )
    assert bench.parse_verdict("x=misaligned: says drop X, keeps X") == ("x", "misaligned", "says drop X, keeps X")
    for bad in ("x", "x=maybe", "x=hackable", "x=misaligned", "x=misaligned: ", "=ok"):
        with pytest.raises(ValueError):
            bench.parse_verdict(bad)
    with pytest.raises(ValueError, match="0 logged environments"):
        bench.record_verdicts(log, ["ffff=ok"], "me")
    bench.record_verdicts(log, [f"{env_id[:8]}=hackable: writes the quoted line"], "me")
    (audit,) = bench.audits(bench.load_log(log)).values()
    assert audit[0]["method"] == "read" and audit[0]["by"] == "me" and audit[0]["env_id"] == env_id


def _lines(audited: int, hackable: int, misaligned: int = 0) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {"kind": "round", "run": "r@1", "round": 1, "code": "c1", "proposals": 6, "judged": 10, "hackable": 1,
         "flags": {"hackable:empty-files": 1}},
    ]  # fmt: skip
    for i in range(audited + 2):  # two more accepted than audited
        lines.append({"kind": "env", "env_id": f"e{i}", "content_hash": f"h{i}", "code": "c1", "probed": True,
                      "flags": [], "headline": f"task {i}", "run": "r@1",
                      "status": "learnable" if i % 2 else "too-hard"})  # fmt: skip
    for i in range(audited):
        verdict = "hackable" if i < hackable else "ok"
        lines.append({"kind": "audit", "content_hash": f"h{i}", "method": "read", "verdict": verdict, "how": "x"})
    for i in range(misaligned):  # counted from the last audited back, so a hackable one can be misaligned too
        h = f"h{audited - 1 - i}"
        lines.append({"kind": "audit", "content_hash": h, "method": "read", "verdict": "misaligned", "how": "y"})
    return lines


def test_the_residual_counts_audited_environments_only(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    summary = bench.report(_lines(audited=4, hackable=1))
    assert summary["gate"]["judged"] == 10 and summary["gate"]["hackable"] == 1
    assert summary["accepted"] == 6 and summary["audited"] == 4 and summary["residual"]["hackable"] == 1
    assert summary["residual"]["verdict"].startswith("open")
    assert "e0 (c1): task 0 -- read: x" in capsys.readouterr().out
    # none hackable of 189 audited puts the 95 % Wilson upper limit under 2 %
    assert bench.needed(0, 0) == 189 and bench.needed(0, 189) == 0 and bench.needed(1, 0) > 189
    assert bench.report(_lines(audited=189, hackable=0))["residual"]["verdict"] == "met"
    assert bench.report(_lines(audited=0, hackable=0))["residual"]["verdict"].startswith("open")


def test_misaligned_is_counted_among_the_environments_read_and_is_not_hackable(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(audited=4, hackable=1, misaligned=4)  # e0 is hackable and misaligned; e1..e3 misaligned only
    lines.append({"kind": "audit", "content_hash": "h5", "method": "probes", "verdict": "ok", "how": ""})
    summary = bench.report(lines)
    assert summary["residual"]["hackable"] == 1 and summary["audited"] == 5
    assert summary["misaligned"]["read"] == 4 and summary["misaligned"]["misaligned"] == 4  # h5 was not read
    assert summary["misaligned"]["learnable"] == 2  # e1 and e3
    out = capsys.readouterr().out
    assert "misaligned (read): 4 of 4 read" in out and "| c1 | 1 | 10 | 1 | 6 | 5 | 1 | 4 |" in out
    assert bench.report(_lines(audited=3, hackable=0))["misaligned"]["misaligned"] == 0


def test_a_run_is_started_then_resumed_and_its_rounds_are_tallied(bench: ModuleType, tmp_path: Path) -> None:
    scripted = BENCHMARKS.parent / "examples" / "flywheel" / "scripted.toml"
    args = argparse.Namespace(config=scripted, set=["backend=fake", "rounds=1"], out=tmp_path / "runs",
                              log=tmp_path / "log.jsonl", hours=None)  # fmt: skip
    assert bench.run(args, "abc1234") == 0  # the fake sandbox: every trial an error, no environment accepted
    rdir = tmp_path / "runs" / "abc1234" / "run-0"
    assert (rdir / "metrics.jsonl").is_file() and bench.next_run_dir(args.out, "abc1234") == rdir  # 1 of 20 rounds
    (line,) = bench.load_log(args.log)
    assert line["kind"] == "round" and line["code"] == "abc1234" and line["judged"] == 0
    assert bench.flywheel_command(scripted, rdir, [])[4] == "resume"


def _logged(tmp_path: Path) -> Path:
    log = tmp_path / "hackable-share.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in _lines(audited=4, hackable=1)), encoding="utf-8")
    return log


def test_only_a_report_of_the_whole_log_rewrites_the_summary(bench: ModuleType, tmp_path: Path) -> None:
    log = _logged(tmp_path)
    summary = log.with_suffix(".summary.json")
    assert bench.main(["--log", str(log), "--report", "--codes", "c1"]) == 0
    assert not summary.exists()  # some codes' figures only print: the committed summary stays the whole log's
    assert bench.main(["--log", str(log), "--report"]) == 0
    figures = json.loads(summary.read_text(encoding="utf-8"))
    assert figures["codes"] == "all" and figures["audited"] == 4 and figures["residual"]["hackable"] == 1


def test_a_report_whose_reader_left_ends_quietly_with_its_summary_written(tmp_path: Path) -> None:
    log = _logged(tmp_path)
    read, write = os.pipe()
    os.close(read)  # `--report | head` after head exited: every write fails with EPIPE
    try:
        done = subprocess.run([sys.executable, str(BENCHMARKS / "hackable_share.py"), "--log", str(log), "--report"],
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=120, check=False)  # fmt: skip
    finally:
        os.close(write)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert json.loads(log.with_suffix(".summary.json").read_text(encoding="utf-8"))["accepted"] == 6
