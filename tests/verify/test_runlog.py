from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from autoenvscaling.verify.runlog import ResultsLog, latest_run_dir


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

    from autoenvscaling.verify.runlog import write_resolved_config

    path = write_resolved_config(tmp_path, {"a": None, "b": {"c": None, "d": 1}, "e": [1, None], "p": tmp_path})
    assert tomllib.loads(path.read_text()) == {"b": {"d": 1}, "e": [1], "p": str(tmp_path)}
