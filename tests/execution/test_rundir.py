"""The run-directory kit: the results log, atomic writes that survive a crash, the run lock."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from autoenvscaling.errors import UserInputError
from autoenvscaling.execution import rundir
from autoenvscaling.execution.rundir import ResultsLog, latest_run_dir


class Rec(BaseModel):
    n: int


def test_torn_last_line_is_discarded(tmp_path: Path) -> None:
    log = ResultsLog(tmp_path / "r.jsonl", Rec)
    log.append(Rec(n=1))
    log.append(Rec(n=2))
    with (tmp_path / "r.jsonl").open("a") as f:
        f.write('{"n": 3')  # a crash mid-write
    assert [r.n for r in log.load()] == [1, 2]
    log.append(Rec(n=3))
    assert [r.n for r in log.load()] == [1, 2, 3]


def test_reset_and_latest(tmp_path: Path) -> None:
    log = ResultsLog(tmp_path / "r.jsonl", Rec)
    log.append(Rec(n=1))
    log.reset()
    assert log.load() == []
    assert latest_run_dir(tmp_path, "validate") is None
    (tmp_path / "validate-1").mkdir()
    assert latest_run_dir(tmp_path, "validate") == tmp_path / "validate-1"


def test_resolved_config_leaves_out_unset_values(tmp_path: Path) -> None:
    import tomllib

    from autoenvscaling.execution.rundir import write_resolved_config

    path = write_resolved_config(tmp_path, {"a": None, "b": {"c": None, "d": 1}, "e": [1, None], "p": tmp_path})
    assert tomllib.loads(path.read_text()) == {"b": {"d": 1}, "e": [1], "p": str(tmp_path)}


def test_atomic_write_replaces_whole_and_fsyncs_the_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[Path] = []
    real = rundir.fsync_dir
    monkeypatch.setattr(rundir, "fsync_dir", lambda p: (synced.append(p), real(p)))
    target = tmp_path / "sub" / "summary.json"
    rundir.write_atomic(target, "one")
    rundir.write_atomic(target, b"two")
    assert target.read_text() == "two"
    assert synced == [target.parent, target.parent]
    assert [p.name for p in target.parent.iterdir()] == ["summary.json"]  # no temp file left


def test_first_append_fsyncs_the_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[Path] = []
    monkeypatch.setattr(rundir, "fsync_dir", synced.append)
    log = ResultsLog(tmp_path / "r.jsonl", Rec)
    log.append(Rec(n=1))
    log.append(Rec(n=2))
    assert synced == [tmp_path]


def test_run_lock_refuses_a_second_holder(tmp_path: Path) -> None:
    # flock is per open file description: a second open of the lock file conflicts even in one process
    with (
        rundir.run_lock(tmp_path, "validation"),
        pytest.raises(UserInputError, match="another process is running this validation"),
        rundir.run_lock(tmp_path, "validation"),
    ):
        pass
    with rundir.run_lock(tmp_path):
        pass
