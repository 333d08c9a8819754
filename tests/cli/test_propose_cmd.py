"""`autoenv propose --resume`: what it refuses, through the real typer app (before any model or engine starts)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from autoenvscaling.cli.app import app
from autoenvscaling.errors import UserInputError

runner = CliRunner()


def _propose(*args: str) -> tuple[int, str]:
    """The exit code and the user error raised (the installed entry point prints it as one line)."""
    result = runner.invoke(app, ["propose", *args])
    assert isinstance(result.exception, UserInputError), result.output
    return result.exit_code, str(result.exception)


def test_resume_needs_the_run_dir_of_a_propose_run_in_the_same_mode(tmp_path: Path) -> None:
    code, said = _propose("--resume", "--mode", "prompt")
    assert code == 1 and "--resume needs --out" in said
    code, said = _propose("--resume", "--mode", "prompt", "--out", str(tmp_path))
    assert code == 1 and "holds no propose run" in said
    (tmp_path / "config.resolved.toml").write_text('[propose]\nmode = "staged"\n')
    code, said = _propose("--resume", "--mode", "prompt", "--out", str(tmp_path))
    assert code == 1 and "was run with --mode staged, not prompt" in said
    (tmp_path / "config.resolved.toml").write_text("[propose\n")
    code, said = _propose("--resume", "--mode", "prompt", "--out", str(tmp_path))
    assert code == 1 and "cannot read" in said
