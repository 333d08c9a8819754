import subprocess
import sys


def run(tmp_path, *args):
    env = {"TODO_FILE": str(tmp_path / "todo.json"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "todo", *args], cwd="/app", env=env, capture_output=True, text=True)


def test_add_and_list(tmp_path):
    assert run(tmp_path, "add", "buy milk").stdout == "added 1\n"
    assert run(tmp_path, "add", "call Bob").stdout == "added 2\n"
    assert run(tmp_path, "list").stdout == "1. [ ] buy milk\n2. [ ] call Bob\n"


def test_done(tmp_path):
    run(tmp_path, "add", "buy milk")
    assert run(tmp_path, "done", "1").returncode == 0
    assert run(tmp_path, "list").stdout == "1. [x] buy milk\n"


def test_done_unknown(tmp_path):
    result = run(tmp_path, "done", "7")
    assert result.returncode == 2
    assert result.stderr == "no item 7\n"
