"""The catalog: add, exact and near duplicates, status updates, crash recovery, threads."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from importlib import resources
from pathlib import Path

import pytest

from autoenvscaling.errors import UserInputError
from autoenvscaling.pool import (
    Calibration,
    CalibrationBand,
    DedupConfig,
    EnvStatus,
    Lineage,
    Pool,
    PoolError,
    UnknownEnvError,
)
from autoenvscaling.pool.dedup import shared_test_files
from autoenvscaling.pool.schema import SCHEMA_VERSION
from autoenvscaling.tasks.model import load_task, task_content_hash
from autoenvscaling.validate.report import ValidationReport, Verdict
from pool_tasks import one_word_changed, write_task


def _report(verdict: Verdict, content_hash: str | None = None) -> ValidationReport:
    return ValidationReport(task_name="t", task_path="/x", verdict=verdict, content_hash=content_hash)


def test_open_creates_layout_and_schema(tmp_path: Path) -> None:
    with Pool.open(tmp_path / "p") as pool:
        assert (tmp_path / "p" / "envs").is_dir()
        assert pool.db_path == (tmp_path / "p" / "catalog.sqlite").resolve()
    conn = sqlite3.connect(tmp_path / "p" / "catalog.sqlite")
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        assert meta["schema_version"] == str(SCHEMA_VERSION)
        assert DedupConfig.model_validate_json(meta["dedup_config"]) == DedupConfig()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_add_copies_task_and_records_entry(pool: Pool, tasks_dir: Path) -> None:
    src = write_task(tasks_dir / "sales", "csv")
    lineage = Lineage(proposer_episode="ep-1", solver_trajectories=["runs/r1/trials/a__1/agent/trajectory.json"])
    result = pool.add(src, domain="data", round=2, source="proposer", lineage=lineage)
    full_hash = task_content_hash(src)
    assert result.added and result.outcome == "added" and result.status == EnvStatus.CANDIDATE
    assert result.id == full_hash[:16]
    entry = pool.get(result.id)
    assert entry.content_hash == full_hash
    assert (entry.name, entry.domain, entry.round, entry.source) == ("sales", "data", 2, "proposer")
    assert entry.lineage.proposer_episode == "ep-1"
    assert entry.lineage.origin_path == str(src.resolve())
    assert entry.instruction.startswith("Read the comma separated file")
    assert entry.path == pool.envs_dir / result.id
    assert task_content_hash(entry.path) == full_hash
    assert load_task(entry.path).instruction == entry.instruction
    assert list(pool.tmp_dir.iterdir()) == []


def test_adding_same_dir_twice_is_a_noop(pool: Pool, tasks_dir: Path) -> None:
    src = write_task(tasks_dir / "sales", "csv")
    first = pool.add(src)
    second = pool.add(src)
    copy = shutil.copytree(src, tasks_dir / "elsewhere")  # same files, other place and name
    third = pool.add(copy)
    assert not second.added and second.outcome == "exact-duplicate"
    assert second.id == third.id == first.id == second.duplicate_of
    assert pool.count() == 1
    assert [p.name for p in pool.envs_dir.iterdir()] == [first.id]


def test_near_duplicate_is_stored_as_duplicate(pool: Pool, tasks_dir: Path) -> None:
    original = pool.add(write_task(tasks_dir / "a", "csv"))
    near = pool.add(write_task(tasks_dir / "b", "csv", instruction=one_word_changed("csv")))
    assert near.added and near.outcome == "near-duplicate"
    assert near.status == EnvStatus.DUPLICATE
    assert near.duplicate_of == original.id
    assert near.similarity is not None and near.similarity >= 0.8
    entry = pool.get(near.id)
    assert (entry.status, entry.duplicate_of, entry.similarity) == (EnvStatus.DUPLICATE, original.id, near.similarity)


def test_non_duplicates_are_candidates(pool: Pool, tasks_dir: Path) -> None:
    results = [pool.add(write_task(tasks_dir / t, t)) for t in ("csv", "nginx", "git")]
    assert [r.outcome for r in results] == ["added"] * 3
    assert pool.count(status="candidate") == 3
    assert pool.near_duplicates(tasks_dir / "csv") == []  # itself does not count


def test_near_duplicate_policies(pool: Pool, tasks_dir: Path) -> None:
    original = pool.add(write_task(tasks_dir / "a", "nginx"))
    near_dir = write_task(tasks_dir / "b", "nginx", instruction=one_word_changed("nginx"))
    rejected = pool.add(near_dir, near_duplicate="reject")
    assert (rejected.added, rejected.outcome, rejected.duplicate_of) == (False, "rejected", original.id)
    assert pool.count() == 1 and not (pool.envs_dir / rejected.id).exists()
    assert pool.near_duplicates(near_dir)[0][0] == original.id
    kept = pool.add(near_dir, near_duplicate="ignore")
    assert (kept.outcome, kept.status, kept.duplicate_of) == ("added", EnvStatus.CANDIDATE, None)


def test_invalid_entry_does_not_block_its_fixed_version(pool: Pool, tasks_dir: Path) -> None:
    broken = pool.add(write_task(tasks_dir / "v1", "git"))
    pool.record_validation(broken.id, _report(Verdict.INVALID))
    fixed = pool.add(write_task(tasks_dir / "v2", "git", extra="\n# fixed the path check\n"))
    assert fixed.outcome == "added" and fixed.status == EnvStatus.CANDIDATE


def test_get_by_prefix_and_unknown_ids(pool: Pool, tasks_dir: Path) -> None:
    added = pool.add(write_task(tasks_dir / "a", "csv"))
    assert pool.get(added.id[:6]).id == added.id
    with pytest.raises(UnknownEnvError, match="not in the pool"):
        pool.get("ffffffffffff")
    with pytest.raises(UnknownEnvError):
        pool.retire("nope")
    with pytest.raises(UnknownEnvError):
        pool.get("%")  # LIKE wildcards are literal


def test_list_filters(pool: Pool, tasks_dir: Path) -> None:
    a = pool.add(write_task(tasks_dir / "a", "csv"), domain="data", round=1)
    b = pool.add(write_task(tasks_dir / "b", "nginx"), domain="ops", round=1)
    c = pool.add(write_task(tasks_dir / "c", "git"), domain="ops", round=2)
    pool.retire(c.id)
    assert [e.id for e in pool.list()] == [a.id, b.id, c.id]
    assert [e.id for e in pool.list(domain="ops")] == [b.id, c.id]
    assert [e.id for e in pool.list(round=1, domain="ops")] == [b.id]
    assert [e.id for e in pool.list(status=["retired", EnvStatus.CANDIDATE])] == [a.id, b.id, c.id]
    assert [e.id for e in pool.list(status="retired")] == [c.id]
    with pytest.raises(UserInputError):
        pool.list(status="bogus")


def test_record_validation_sets_status_by_verdict(pool: Pool, tasks_dir: Path) -> None:
    entry_id = pool.add(write_task(tasks_dir / "a", "csv")).id
    content_hash = pool.get(entry_id).content_hash
    assert pool.record_validation(entry_id, _report(Verdict.ERROR)).status == EnvStatus.CANDIDATE
    entry = pool.record_validation(entry_id, _report(Verdict.VALID, content_hash))
    assert entry.status == EnvStatus.VALID
    assert entry.validation is not None and entry.validation.verdict == Verdict.VALID
    assert pool.record_validation(entry_id, _report(Verdict.TIMEOUT)).status == EnvStatus.INVALID
    with pytest.raises(PoolError, match="other content"):
        pool.record_validation(entry_id, _report(Verdict.VALID, "0" * 64))
    pool.retire(entry_id)
    assert pool.record_validation(entry_id, _report(Verdict.VALID)).status == EnvStatus.RETIRED


@pytest.mark.parametrize(
    ("passes", "status"), [(0, EnvStatus.TOO_HARD), (3, EnvStatus.LEARNABLE), (8, EnvStatus.TOO_EASY)]
)
def test_record_calibration_classifies_pass_rate(pool: Pool, tasks_dir: Path, passes: int, status: EnvStatus) -> None:
    entry_id = pool.add(write_task(tasks_dir / "a", "csv")).id
    pool.record_validation(entry_id, _report(Verdict.VALID))
    cal = Calibration(attempts=8, passes=passes, trial_dirs=[f"runs/r/trials/a__{i}" for i in range(8)])
    entry = pool.record_calibration(entry_id, cal)
    assert entry.status == status
    assert entry.calibration is not None
    assert entry.calibration.pass_rate == passes / 8
    assert entry.calibration.learnability == pytest.approx(4 * (passes / 8) * (1 - passes / 8))
    assert len(entry.calibration.trial_dirs) == 8


def test_calibration_band() -> None:
    band = CalibrationBand(low=0.1, high=0.9)
    assert band.classify(Calibration(attempts=10, passes=1)) == EnvStatus.TOO_HARD
    assert band.classify(Calibration(attempts=10, passes=2)) == EnvStatus.LEARNABLE
    assert band.classify(Calibration(attempts=10, passes=9)) == EnvStatus.TOO_EASY
    assert band.classify(Calibration(attempts=0, passes=0)) == EnvStatus.TOO_HARD


def test_leftovers_of_a_crash_are_removed_on_open(tmp_path: Path, tasks_dir: Path) -> None:
    root = tmp_path / "p"
    with Pool.open(root) as pool:
        kept = pool.add(write_task(tasks_dir / "a", "csv")).id
    dead_stage = root / "tmp" / "999999999-deadbeef"
    write_task(dead_stage, "git")
    orphan = write_task(root / "envs" / "0123456789abcdef", "nginx")
    with Pool.open(root) as pool:
        assert not dead_stage.exists() and not orphan.exists()
        assert [p.name for p in pool.envs_dir.iterdir()] == [kept]


_CRASH_AFTER_RENAME = """
import os, sys
from pathlib import Path
from autoenvscaling.pool import Pool

real_rename = Path.rename
def rename_then_die(self, target):
    real_rename(self, target)
    os._exit(3)  # the dir is in place, the row is not committed
Path.rename = rename_then_die
Pool.open(sys.argv[1]).add(sys.argv[2])
"""


def test_process_killed_between_rename_and_commit(tmp_path: Path, tasks_dir: Path) -> None:
    root = tmp_path / "p"
    src = write_task(tasks_dir / "a", "csv")
    env_id = task_content_hash(src)[:16]
    proc = subprocess.run([sys.executable, "-c", _CRASH_AFTER_RENAME, str(root), str(src)], check=False)
    assert proc.returncode == 3
    assert (root / "envs" / env_id).is_dir()  # the crash left the dir behind
    with Pool.open(root) as pool:
        assert pool.count() == 0
        assert not (root / "envs" / env_id).exists()
        assert pool.add(src).added  # and the same task can be added again


def test_changed_dedup_config_reindexes(tmp_path: Path, tasks_dir: Path) -> None:
    root = tmp_path / "p"
    with Pool.open(root) as pool:
        first = pool.add(write_task(tasks_dir / "a", "csv")).id
    strict = DedupConfig(threshold=0.99, shingle_k=5)
    with Pool.open(root, dedup=strict) as pool:
        assert pool.dedup == strict
        near = pool.add(write_task(tasks_dir / "b", "csv", instruction=one_word_changed("csv")))
        assert near.outcome == "added"  # not similar enough under the strict setting
        # Same text, other Dockerfile: found only if the first entry was re-signed under the new settings.
        same_text = write_task(tasks_dir / "c", "csv")
        (same_text / "environment" / "Dockerfile").write_text("FROM autoenv/terminal:latest\nWORKDIR /app\n")
        assert pool.add(same_text).duplicate_of == first
    with Pool.open(root) as pool:
        assert pool.dedup == strict  # stored settings win when none are given


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    Pool.open(tmp_path / "p").close()
    conn = sqlite3.connect(tmp_path / "p" / "catalog.sqlite")
    with conn:
        conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(PoolError, match="newer"):
        Pool.open(tmp_path / "p")


def test_concurrent_adds_from_threads(pool: Pool, tasks_dir: Path) -> None:
    distinct = [
        write_task(
            tasks_dir / f"t{i}", "git", instruction=f"Task number {i}: " + " ".join(f"x{i}y{j}" for j in range(40))
        )
        for i in range(12)
    ]
    same = write_task(tasks_dir / "same", "csv")
    jobs = [*distinct, same, same, same, same]
    results: dict[int, str] = {}
    errors: list[BaseException] = []

    def work(i: int, path: Path) -> None:
        try:
            results[i] = pool.add(path).id
        except BaseException as e:  # surfaced below; a thread's exception is otherwise lost
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i, p)) for i, p in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len({results[i] for i in range(12, 16)}) == 1
    assert pool.count() == 13
    assert sorted(p.name for p in pool.envs_dir.iterdir()) == sorted(e.id for e in pool.list())
    assert os.listdir(pool.tmp_dir) == []


def _staged(root: Path, instruction: str, expected: str) -> Path:
    """A task as the staged proposer writes one: its output grader verbatim and one recorded output."""
    task = write_task(root, "csv", instruction=instruction)
    tests = task / "tests"
    (tests / "test_outputs.py").write_bytes(
        resources.files("autoenvscaling.roles.proposer.staged").joinpath("grading.py").read_bytes()
    )
    (tests / "expected").mkdir()
    (tests / "expected" / "1-out.txt").write_text(expected, encoding="utf-8")
    expectation = {"path": "/app/out.txt", "expected": "1-out.txt", "compare": "exact"}
    (tests / "expectations.json").write_text(json.dumps([expectation], indent=2), encoding="utf-8")
    return task


LOG_RULE = "Select all lines where the status code is greater than 400. The input is /app/data/access.log."


def test_environments_sharing_the_staged_grader_are_judged_on_what_differs(tmp_path: Path, tasks_dir: Path) -> None:
    log = _staged(tasks_dir / "log", LOG_RULE, "10.0.0.2 GET /missing 404\n10.0.0.1 POST /login 500\n")
    conf = _staged(tasks_dir / "conf", "Keep only lines containing 'admin' from /app/data/app.conf.", "admin = 1\n")
    reworded = _staged(
        tasks_dir / "again",
        LOG_RULE.replace("Select all", "Keep only"),
        "10.0.0.2 GET /missing 404\n10.0.0.1 POST /login 500\n",
    )
    with Pool.open(tmp_path / "with-grader", dedup=DedupConfig(leave_out=[])) as pool:
        first = pool.add(log)
        assert pool.add(conf, near_duplicate="reject").outcome == "rejected"  # the grader makes any two alike
    with Pool.open(tmp_path / "with-grader", dedup=DedupConfig()) as pool:  # reindexed without it
        assert pool.add(conf).outcome == "added"
        again = pool.add(reworded)
        assert (again.outcome, again.duplicate_of) == ("near-duplicate", first.id)


def test_settings_stored_before_leave_out_left_nothing_out() -> None:
    old = DedupConfig(threshold=0.9).model_dump(exclude={"leave_out"})
    assert DedupConfig.stored(json.dumps(old)).leave_out == []
    assert DedupConfig().leave_out == shared_test_files() != []
    with pytest.raises(ValueError, match="leave_out"):
        DedupConfig(leave_out=["not a digest"])
