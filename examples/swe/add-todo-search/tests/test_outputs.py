"""Hidden tests: the new `search` command (fail-to-pass) and the existing commands (pass-to-pass)."""

import json
import subprocess
import sys


def run(tmp_path, *args):
    env = {"TODO_FILE": str(tmp_path / "todo.json"), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "todo", *args], cwd="/app", env=env, capture_output=True, text=True, timeout=30
    )


def seed(tmp_path):
    # Written directly in the store's format (checked by test_add_list_done) to keep the tests quick.
    texts = ["Buy milk", "call Bob", "buy MILK powder", "Write report", "call the bank"]
    items = [{"id": i, "text": t, "done": i in (2, 3)} for i, t in enumerate(texts, start=1)]
    (tmp_path / "todo.json").write_text(json.dumps(items, indent=2) + "\n")


# --- fail to pass ---


def test_search_ignores_case(tmp_path):
    seed(tmp_path)
    result = run(tmp_path, "search", "milk")
    assert result.returncode == 0
    assert result.stdout == "1. [ ] Buy milk\n3. [x] buy MILK powder\n"


def test_search_upper_case_term(tmp_path):
    seed(tmp_path)
    assert run(tmp_path, "search", "CALL").stdout == "2. [x] call Bob\n5. [ ] call the bank\n"


def test_search_open_only(tmp_path):
    seed(tmp_path)
    result = run(tmp_path, "search", "call", "--open")
    assert (result.returncode, result.stdout) == (0, "5. [ ] call the bank\n")


def test_search_no_match(tmp_path):
    seed(tmp_path)
    result = run(tmp_path, "search", "zebra")
    assert (result.returncode, result.stdout) == (1, "")
    only_done = run(tmp_path, "search", "bob", "--open")
    assert (only_done.returncode, only_done.stdout) == (1, "")


def test_search_does_not_write(tmp_path):
    seed(tmp_path)
    before = (tmp_path / "todo.json").read_bytes()
    run(tmp_path, "search", "milk")
    assert (tmp_path / "todo.json").read_bytes() == before


def test_search_on_empty_store(tmp_path):
    result = run(tmp_path, "search", "x")
    assert (result.returncode, result.stdout) == (1, "")


# --- pass to pass ---


def test_add_list_done(tmp_path):
    assert run(tmp_path, "add", "buy milk").stdout == "added 1\n"
    assert run(tmp_path, "add", "call Bob").stdout == "added 2\n"
    assert run(tmp_path, "done", "2").returncode == 0
    assert run(tmp_path, "list").stdout == "1. [ ] buy milk\n2. [x] call Bob\n"
    stored = json.loads((tmp_path / "todo.json").read_text())
    assert stored == [{"id": 1, "text": "buy milk", "done": False}, {"id": 2, "text": "call Bob", "done": True}]


def test_done_unknown_id(tmp_path):
    result = run(tmp_path, "done", "9")
    assert (result.returncode, result.stderr) == (2, "no item 9\n")


def test_unknown_command_is_an_error(tmp_path):
    assert run(tmp_path, "frobnicate").returncode == 2
