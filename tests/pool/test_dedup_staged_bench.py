"""``benchmarks/dedup_staged.py``: the pool's similarity of staged environments rebuilt from the log."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from bench_module import load_bench


def _env(content_hash: str, instruction: str, expected: str) -> dict[str, object]:
    return {"kind": "env", "content_hash": content_hash, "instruction": instruction,
            "expected": {"/app/out.txt": expected}}  # fmt: skip


def test_the_grader_makes_distinct_environments_alike_and_the_pool_leaves_it_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rule = "Select all lines where the status code is greater than 400. The input is /app/data/access.log."
    log = tmp_path / "log.jsonl"
    rows = [
        {"kind": "round", "round": 1},
        _env("a" * 16, rule, "10.0.0.2 GET /missing 404\n"),
        _env("b" * 16, rule.replace("Select all", "Keep only"), "10.0.0.2 GET /missing 404\n"),  # a twin
        _env("c" * 16, "Keep only lines containing 'admin' from /app/data/app.conf.", "admin = 1\n"),
        {**_env("d" * 16, "Write the number of lines of /app/data/passwd.", ""), "expected": {}},  # none recorded
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setattr(sys, "argv", ["dedup_staged.py", "--log", str(log)])
    load_bench("dedup_staged").main()
    out = capsys.readouterr().out
    counts = dict(re.findall(r"^grader (compared|left out) .*near-duplicate pairs\s+(\d+)", out, re.MULTILINE))
    assert counts == {"compared": "3", "left out": "1"}, out
    assert f"{'a' * 8} {'b' * 8} (same outputs)" in out
    assert out.startswith("3 accepted environments, 3 pairs")
