"""The flywheel end to end on Docker with scripted models (examples/flywheel/scripted.toml, two rounds), and the
same run killed with SIGKILL at several points and resumed: it must end exactly where the uninterrupted run
ends, with nothing lost, nothing duplicated and no container left."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from flywheel_helpers import SCRIPTED, autoenv, snapshot

from autoenvscaling.flywheel.accepted import accepted_environments
from autoenvscaling.flywheel.rounds import Flywheel
from autoenvscaling.pool import EnvStatus, Pool
from docker_helpers import containers_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]


_STDOUT: dict[Path, str] = {}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("fw") / "flywheel-reference"
    proc = autoenv("flywheel", "run", "--config", str(SCRIPTED), "--run-dir", str(run))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"report:  {run / 'report.html'}" in " ".join(proc.stdout.split()) or "report.html" in proc.stdout
    _STDOUT[run] = proc.stdout
    return run


def test_the_accepted_environments_are_the_calibrated_ones_and_the_run_names_them(reference: Path) -> None:
    fw = Flywheel.open(reference)
    accepted = accepted_environments(fw.paths, fw.config)
    # round 2's near-duplicate is in no calibration; every accepted one is a pool entry with its files
    assert [(a.round, a.status) for a in accepted] == [(1, "learnable"), (1, "too-easy"), (2, "learnable")]
    assert all((a.path / "instruction.md").is_file() and a.headline for a in accepted)
    out = " ".join(_STDOUT[reference].split())
    assert "environments accepted this run:" in out
    assert all(a.env_id in out and a.headline[:40] in out for a in accepted)


def test_two_rounds_end_to_end(reference: Path) -> None:
    r1, r2 = (json.loads(line) for line in (reference / "metrics.jsonl").read_text().splitlines())
    assert (r1["proposals"], r1["valid"], r1["learnable"], r1["too_easy"]) == (2, 2, 1, 1)
    assert (r1["pass_rate_new"], r1["pass_rate_heldout"], r1["pass_rate_seed"]) == (0.75, 0.5, 0.0)
    assert r1["difficulty_histogram"]["(0.25,0.5]"] == 1 and r1["difficulty_histogram"]["1"] == 1
    assert r1["tokens_per_valid_env"] > 0 and r1["domain_mix"] == {
        "terminal": {"proposals": 2, "valid": 2, "learnable": 1}
    }
    assert (r2["near_duplicates"], r2["added"], r2["learnable"], r2["pool_size"], r2["pool_learnable"]) == (
        1,
        1,
        1,
        3,
        2,
    )

    with Pool.open(reference / "pool") as pool:
        entries = {next(k for k in ("ERROR", "sum", "longest") if k in e.instruction): e for e in pool.list()}
    assert {n: (e.round, e.status) for n, e in entries.items()} == {
        "ERROR": (1, EnvStatus.LEARNABLE),
        "sum": (1, EnvStatus.TOO_EASY),
        "longest": (2, EnvStatus.LEARNABLE),
    }
    first = entries["ERROR"]
    assert first.calibration is not None and (first.calibration.attempts, first.calibration.passes) == (2, 1)
    assert first.lineage.proposer_episode and first.round == 1

    # The round-2 near-duplicate is rejected with the id it duplicates, and its episode earns nothing.
    dedup = json.loads((reference / "rounds/2/dedup/output.json").read_text())
    rejected = [a for a in dedup["adds"] if a["outcome"] == "rejected"]
    assert len(rejected) == 1 and rejected[0]["duplicate_of"] == first.id and rejected[0]["verdict"] == "valid"
    rewards = {}
    for n in (1, 2):
        for ep in sorted((reference / f"rounds/{n}/propose/terminal/episodes").iterdir()):
            extra = json.loads((ep / "trajectory.json").read_text())["extra"]
            rewards[(n, ep.name)] = extra["learnability_reward"]
    assert rewards == {(1, "prompt-000"): 1.0, (1, "prompt-001"): 0.0, (2, "prompt-000"): 1.0, (2, "prompt-001"): 0.0}

    export = reference / "rounds/2/export"
    assert json.loads((export / "dataset/dataset.json").read_text())["count"] == 2
    assert (export / "pool.parquet").is_file()
    sft = [json.loads(line) for line in (export / "sft.jsonl").read_text().splitlines()]
    assert sft and all(ex["metadata"]["reward"] == 1.0 for ex in sft)
    assert any(m.get("tool_calls") for m in sft[0]["messages"])
    episodes = [json.loads(line) for line in (export / "proposer_episodes.jsonl").read_text().splitlines()]
    assert sorted(e["reward"] for e in episodes) == [0.0, 1.0] and all(e["messages"] for e in episodes)


def test_report_links_resolve(reference: Path) -> None:
    page = (reference / "report.html").read_text()
    links = re.findall(r'(?:href|src)="([^"]+)"', page)
    assert len(links) > 20 and all(not link.startswith("/") for link in links)
    missing = [link for link in links if not (reference / link).exists()]
    assert missing == []
    assert "report/yield.png" in links and page.count("learnable") >= 2


def test_killed_at_several_points_then_resumed_ends_like_the_uninterrupted_run(reference: Path, tmp_path: Path) -> None:
    run = tmp_path / "flywheel-crashy"
    points = [
        "r1.validate.sandbox#3",  # a validation container is running (the resume keeps the checks logged)
        "r1.dedup.pool",  # a pool write committed, its record not written
        "r1.calibrate.attempt",  # half of an environment's attempts done
        "r2.propose.done",  # a stage output written, the next stage not started
        "r2.calibrate.sandbox",  # a calibration container is running
    ]
    left_running = 0
    for i, point in enumerate(points):
        args = ("run", "--config", str(SCRIPTED), "--run-dir", str(run)) if i == 0 else ("resume", str(run))
        proc = autoenv("flywheel", *args, crash_at=point)
        assert proc.returncode == -9, f"{point}: did not crash\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        left_running += len(containers_of(run.name))
    assert left_running >= 2  # the kills did leave containers behind for the resume to clean up
    proc = autoenv("flywheel", "resume", str(run))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "done earlier" in proc.stdout
    assert containers_of(run.name) == []
    assert containers_of(reference.name) == []

    got, want = snapshot(run), snapshot(reference)
    assert got["pool"] == want["pool"]
    assert got["envs"] == want["envs"]
    assert got["metrics"] == want["metrics"] and len(got["metrics"]) == 2
    assert sorted(got["trajectories"]) == sorted(want["trajectories"])
    assert got["trajectories"] == want["trajectories"]
    assert got["exports"] == want["exports"]
    assert got["outputs"] == want["outputs"]
