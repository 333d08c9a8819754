"""``benchmarks/train_env.py`` without Harbor: the scripted rollouts, the reward parity check, the worker protocol
(a stand-in worker), the HarborSpec side skipped with its reason, and our side end to end in Docker."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from autoenvscaling.train.rows import load_rows
from bench_module import load_bench

SEED_TASK = Path(__file__).resolve().parents[2] / "examples" / "flywheel" / "tasks" / "seed-count-words"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("train_env")


def test_scripted_rollouts_are_the_oracles_commands_and_nothing(bench: ModuleType, export_dir: Path) -> None:
    rows = load_rows(export_dir).rows
    plan = bench.scripted_rollouts(rows, 2)
    solve = (Path(rows[0].task_dir) / "solution" / "solve.sh").read_text()
    assert [(p.kind, p.timed) for p in plan] == [
        ("oracle", False),
        ("nothing", False),
        ("timed", True),
        ("timed", True),
    ]
    assert plan[0].commands == [solve] and plan[1].commands == []
    assert len(plan[2].commands) == bench.COMMANDS_PER_ROLLOUT == 10 and plan[2].commands[-1] == solve
    assert {p.task_dir for p in plan} == {rows[0].task_dir}


def _result(bench: ModuleType, item: Any, reward: float | None, **kw: object) -> Any:
    return bench.RolloutResult(task_dir=item.task_dir, kind=item.kind, timed=item.timed, reward=reward, **kw)


def test_parity_names_every_difference(bench: ModuleType, export_dir: Path) -> None:
    plan = bench.scripted_rollouts(load_rows(export_dir).rows, 1)  # oracle, nothing, timed
    expected = [1.0, 0.0, 1.0]
    ours = [_result(bench, p, r) for p, r in zip(plan, expected, strict=True)]
    assert bench.parity(plan, ours, ours) == []
    theirs = [_result(bench, plan[0], 0.0), _result(bench, plan[1], None, error="BuildError: x"), ours[2]]
    problems = bench.parity(plan, ours, theirs)
    assert problems == ["#0 seed-count-words oracle: ours 1 != harbor 0",
                        "#1 seed-count-words nothing: no reward (ours: 0.0, harbor: BuildError: x)"]  # fmt: skip
    both_wrong = [_result(bench, plan[0], 0.0), ours[1], ours[2]]
    assert bench.parity(plan, both_wrong, both_wrong) == ["#0 seed-count-words oracle: both 0, expected 1"]
    assert bench.parity(plan, ours, ours[:2])[0] == "rollout counts differ: plan 3, ours 3, harbor 2"
    assert bench.parity(plan, ours, list(reversed(ours)))[0].endswith("results out of order")


def test_the_harbor_side_is_skipped_with_its_reason(bench: ModuleType, tmp_path: Path) -> None:
    reason = bench.harbor_skip_reason(tmp_path / "no-venv" / "bin" / "python", None)
    assert reason is not None and "no Harbor venv at" in reason and "no-venv" in reason
    # an interpreter without harbor (this one) is refused with the import error
    reason = bench.harbor_skip_reason(Path(sys.executable), None)
    assert reason is not None and "cannot import harbor" in reason and "ModuleNotFoundError" in reason


STAND_IN = """
import json, sys
dataset = json.loads(sys.stdin.readline())["dataset"]
print("harbor log line", file=sys.stderr)
print("TASKS " + json.dumps({"task_dirs": [dataset]}), flush=True)
for line in sys.stdin:
    item = json.loads(line)
    if item["kind"] == "timed":
        sys.exit(3)
    reward = {"oracle": 1.0, "nothing": 0.0}[item["kind"]]
    print("noise")
    print("RESULT " + json.dumps({**item, "reward": reward, "seconds": 1.5}), flush=True)
"""


def test_worker_protocol_with_a_stand_in_worker(bench: ModuleType, export_dir: Path, tmp_path: Path) -> None:
    """The parent's side of the worker protocol (one rollout per line, RESULT lines back, Harbor's log kept),
    with a stand-in worker behind a fake venv python; a worker that dies is reported with its log's tail."""
    (tmp_path / "stand_in.py").write_text(STAND_IN)
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'stand_in.py'}\n")  # ignores the worker path
    fake.chmod(0o755)
    plan = bench.scripted_rollouts(load_rows(export_dir).rows, 1)  # oracle, nothing, timed
    worker = bench.HarborWorker(fake, None, export_dir / "dataset", tmp_path / "worker.log", timeout=30)
    try:
        assert worker.task_dirs == [str(export_dir / "dataset")]
        results = [worker.run(plan[0]), worker.run(plan[1])]
        assert [(r.kind, r.reward, r.seconds) for r in results] == [("oracle", 1.0, 1.5), ("nothing", 0.0, 1.5)]
        with pytest.raises(bench.WorkerError, match=r"(?s)ended before its RESULT line \(exit code 3.*harbor log"):
            worker.run(plan[2])
    finally:
        worker.close()
    assert bench.summarize("harbor", results) is None  # no timed rollout among them


@pytest.mark.docker
def test_our_side_end_to_end_without_harbor(
    bench: ModuleType, docker_backend: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    argv = ["--rollouts", "1", "--tasks", str(SEED_TASK), "--harbor-python", str(tmp_path / "none"), "--json", str(out)]
    assert bench.main(argv) == 0
    report = json.loads(out.read_text())
    assert [(r["kind"], r["reward"]) for r in report["ours"]["results"]] == [
        ("oracle", 1.0), ("nothing", 0.0), ("timed", 1.0)]  # fmt: skip
    assert report["ours"]["summary"]["rollouts"] == 1 and report["ours"]["summary"]["median_sec"] > 0
    assert {"environment_setup", "verifier", "teardown"} <= set(report["ours"]["summary"]["phase_medians"])
    assert report["harbor"]["results"] == [] and "no Harbor venv at" in report["harbor"]["skipped"]
    assert report["parity"] == [] and report["ratio_median"] is None
    text = capsys.readouterr().out
    assert "skipped: no Harbor venv at" in text and "reward parity: all 3 rollouts identical" in text
