"""`autoenv pool ...` through the real typer app."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autoenvscaling.cli.app import app, main
from autoenvscaling.pool import Pool
from pool_tasks import one_word_changed, write_task

runner = CliRunner()


def _invoke(*args: str) -> str:
    result = runner.invoke(app, ["pool", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_add_list_show_retire_export(tmp_path: Path) -> None:
    pool_dir = tmp_path / "pool"
    tasks = tmp_path / "tasks"
    for topic in ("csv", "git"):
        write_task(tasks / topic, topic)
    write_task(tasks / "csv2", "csv", instruction=one_word_changed("csv"))
    out = _invoke("add", str(tasks), "--pool", str(pool_dir), "--domain", "data", "--round", "3")
    assert "added 2, near-duplicates 1, exact duplicates 0, rejected 0" in out
    out = _invoke("add", str(tasks / "git"), "--pool", str(pool_dir))
    assert "exact duplicates 1" in out

    with Pool.open(pool_dir) as pool:
        entries = {e.name: e for e in pool.list()}
    assert entries["csv2"].status.value == "duplicate"
    out = _invoke("list", "--pool", str(pool_dir), "--status", "duplicate")
    assert entries["csv2"].id in out and entries["git"].id not in out
    assert "1 of 3 environment(s)" in out

    out = _invoke("show", entries["csv2"].id[:8], "--pool", str(pool_dir))
    assert "duplicate of" in out and entries["csv"].id in out and "schema_version" in out
    shown = json.loads(_invoke("show", entries["git"].id, "--pool", str(pool_dir), "--json"))
    assert shown["domain"] == "data" and shown["round"] == 3

    out = _invoke("retire", entries["git"].id, "--pool", str(pool_dir))
    assert f"retired {entries['git'].id}" in out
    out = _invoke("export", str(tmp_path / "ds"), "--pool", str(pool_dir), "--status", "retired",
                  "--parquet", str(tmp_path / "ds.parquet"))  # fmt: skip
    assert "exported 1 task dir(s)" in out
    assert (tmp_path / "ds" / "git" / "task.toml").is_file()
    if "pyarrow" in sys.modules or _has_pyarrow():
        assert (tmp_path / "ds.parquet").is_file()


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def test_import_dataset(tmp_path: Path) -> None:
    for topic in ("csv", "nginx"):
        write_task(tmp_path / "ds" / topic, topic)
    out = _invoke("import", str(tmp_path / "ds"), "--pool", str(tmp_path / "pool"))
    assert "added 2" in out
    with Pool.open(tmp_path / "pool") as pool:
        assert {e.source for e in pool.list()} == {"import"}


def test_unknown_id_is_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Pool.open(tmp_path / "p").close()
    monkeypatch.setattr(sys, "argv", ["autoenv", "pool", "show", "deadbeef", "--pool", str(tmp_path / "p")])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "'deadbeef' is not in the pool" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "command", [["status"], ["list"], ["show", "deadbeef"], ["retire", "deadbeef"], ["export", "OUT"]]
)
def test_a_missing_pool_is_an_error_and_is_not_created(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "typo"
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    monkeypatch.setattr(sys, "argv", ["autoenv", "pool", *args, "--pool", str(missing)])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "no pool here" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_bad_option_values(tmp_path: Path) -> None:
    result = runner.invoke(app, ["pool", "add", str(tmp_path), "--source", "robot", "--pool", str(tmp_path / "p")])
    assert result.exit_code != 0
    assert "--source 'robot'" in str(result.exception)
