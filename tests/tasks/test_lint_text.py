"""The text heuristics behind lint: relative paths, grading downloads, TOML key lines."""

from __future__ import annotations

import pytest

from autoenvscaling.tasks.lint_text import download_lines, relative_paths, toml_key_line


@pytest.mark.parametrize(
    "text",
    [
        "Write /app/out.txt.",
        "Use ~/notes.md and $HOME/x.txt.",
        "Docs at https://example.com/guide.html or http://x.org/a.csv",
        "Call json.dumps and re.findall; see os.path.",
        "Node.js, and/or TCP/IP, e.g. version 1.2.3",
        "Match *.log files under /var/log.",
        "Write `/app/result.json` (absolute).",
    ],
)
def test_no_relative_paths(text: str) -> None:
    assert relative_paths(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Write the answer to output.txt.", ["output.txt"]),
        ("Save ./out/x.csv and ../up.json", ["./out/x.csv", "../up.json"]),
        ("Put files in data/input.csv, then out/", ["data/input.csv", "out/"]),
        ('open("report.md")', ["report.md"]),
    ],
)
def test_relative_paths(text: str, expected: list[str]) -> None:
    assert [t for t, _ in relative_paths(text)] == expected


def test_relative_paths_report_first_line_once() -> None:
    assert relative_paths("a\nuse x.txt\nand x.txt again\n") == [("x.txt", 2)]


def test_download_lines() -> None:
    script = "#!/bin/bash\n# curl is fine in a comment\ncurl -s x\npython3 -m pytest\nuvx ruff\n"
    assert download_lines(script) == [("curl", 3), ("uv/uvx", 5)]
    assert download_lines("cat /opt/uv-notes.txt\nls /usr/uv/\n") == []


def test_toml_key_line() -> None:
    text = 'a = 1\n[task]\nname = "x"\n[[steps]]\nname = "s"\n[[steps]]\n"odd" = 2\n[environment.extra]\nk = 1\n'
    assert toml_key_line(text, "a") == 1
    assert toml_key_line(text, "task.name") == 3
    assert toml_key_line(text, "steps[1].odd") == 7
    assert toml_key_line(text, "environment.extra") == 8
    assert toml_key_line(text, "missing") is None
