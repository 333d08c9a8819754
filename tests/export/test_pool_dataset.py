"""The pool's exports (a Harbor dataset dir the pool imports again, and parquet)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autoenvscaling.errors import UserInputError
from autoenvscaling.export.pool_dataset import export_dataset, export_parquet
from autoenvscaling.pool import Calibration, DatasetManifest, EnvStatus, OptionalDependencyError, Pool
from autoenvscaling.tasks.model import load_task, task_content_hash
from autoenvscaling.validate.report import ValidationReport, Verdict
from pool_tasks import write_task


def _fill(pool: Pool, tasks_dir: Path) -> dict[str, str]:
    ids = {t: pool.add(write_task(tasks_dir / t, t), domain="ops", round=1).id for t in ("csv", "nginx", "git")}
    for topic, passes in (("csv", 2), ("nginx", 4)):
        pool.record_validation(ids[topic], ValidationReport(task_name=topic, task_path="/x", verdict=Verdict.VALID))
        pool.record_calibration(ids[topic], Calibration(attempts=4, passes=passes))
    return ids


def test_export_round_trip(pool: Pool, tasks_dir: Path, tmp_path: Path) -> None:
    ids = _fill(pool, tasks_dir)
    dest = tmp_path / "dataset"
    manifest = export_dataset(pool, dest)  # learnable only, by default
    assert [t.id for t in manifest.tasks] == [ids["csv"]]
    on_disk = DatasetManifest.model_validate_json((dest / "dataset.json").read_text())
    assert on_disk == manifest
    task = load_task(dest / manifest.tasks[0].path)
    assert task.instruction.startswith("Read the comma separated file")
    assert task_content_hash(task.paths.root) == manifest.tasks[0].content_hash
    assert manifest.tasks[0].pass_rate == 0.5

    everything = export_dataset(pool, dest, status=list(EnvStatus))  # replaces the earlier export
    assert everything.count == 3
    assert sorted(p.name for p in dest.iterdir() if p.is_dir()) == ["csv", "git", "nginx"]

    with Pool.open(tmp_path / "other") as other:
        results = other.import_dataset(dest, domain="ops")
        assert sorted(r.id for r in results) == sorted(ids.values())
        assert all(r.outcome == "added" for r in results)
        assert all(e.source == "import" for e in other.list())
    again = pool.import_dataset(dest)
    assert [r.outcome for r in again] == ["exact-duplicate"] * 3


def test_export_name_clash_and_foreign_dest(pool: Pool, tasks_dir: Path, tmp_path: Path) -> None:
    a = pool.add(write_task(tasks_dir / "one" / "task", "csv")).id
    b = pool.add(write_task(tasks_dir / "two" / "task", "git")).id
    manifest = export_dataset(pool, tmp_path / "out", status="candidate")
    assert [t.path for t in manifest.tasks] == ["task", f"task-{b[:8]}"]
    assert manifest.tasks[0].id == a
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(UserInputError, match="not an exported dataset"):
        export_dataset(pool, foreign, status="candidate")
    assert (foreign / "notes.txt").read_text() == "mine"


def test_export_parquet(pool: Pool, tasks_dir: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    ids = _fill(pool, tasks_dir)
    path = export_parquet(pool, tmp_path / "out" / "pool.parquet")
    table = pq.read_table(path)
    rows = {r["id"]: r for r in table.to_pylist()}
    assert set(rows) == set(ids.values())
    csv = rows[ids["csv"]]
    assert (csv["status"], csv["pass_rate"], csv["learnability"], csv["verdict"]) == ("learnable", 0.5, 1.0, "valid")
    assert rows[ids["git"]]["pass_rate"] is None
    only = pq.read_table(export_parquet(pool, tmp_path / "l.parquet", status="learnable"))
    assert only.column("id").to_pylist() == [ids["csv"]]
    empty = pq.read_table(export_parquet(pool, tmp_path / "e.parquet", status="retired"))
    assert empty.num_rows == 0 and "instruction" in empty.column_names


def test_export_parquet_without_pyarrow(pool: Pool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(OptionalDependencyError, match=r"autoenvscaling\[report\]"):
        export_parquet(pool, tmp_path / "x.parquet")
