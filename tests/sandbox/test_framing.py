"""The shell channel's byte-level pieces, without a container."""

from __future__ import annotations

import random
import struct
import subprocess
from pathlib import Path

import pytest

from autoenvscaling.sandbox.base import SandboxError
from autoenvscaling.sandbox.framing import Demuxer, HeadTail, StreamCollector, ansi_c_quote, prelude

TOKEN = "0123456789abcdef"


def marker(kind: str) -> bytes:
    return f"\x1e{TOKEN}:{kind}\x1e".encode()


def bash_echo(word: str) -> bytes:
    return subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True).stdout


def test_ansi_c_quote_round_trips_every_byte_but_nul_through_bash() -> None:
    data = bytes(range(1, 256)) + b"'\\\"$`!*\n\nEOF\n"
    word = ansi_c_quote(data)
    assert word.isascii() and "\n" not in word
    assert bash_echo(word) == data


def test_ansi_c_quote_random_bytes() -> None:
    rng = random.Random(7)
    for _ in range(20):
        data = bytes(rng.randrange(1, 256) for _ in range(rng.randrange(0, 300)))
        assert bash_echo(ansi_c_quote(data)) == data


def test_prelude_quotes_values_and_rejects_bad_names(tmp_path: Path) -> None:
    (tmp_path / "with space").mkdir()
    text = prelude({"A": "it's $HOME\nx"}, str(tmp_path / "with space"))
    out = subprocess.run(["bash", "-c", text + ' printf "%s|%s" "$A" "$PWD"'], capture_output=True, check=True)
    assert out.stdout.decode() == f"it's $HOME\nx|{tmp_path}/with space"
    with pytest.raises(SandboxError):
        prelude({"A;rm": "x"}, None)


def test_head_tail_keeps_both_ends_and_counts() -> None:
    ht = HeadTail(10)
    for chunk in (b"abcde", b"12345" * 100, b"vwxyz"):
        ht.add(chunk)
    assert ht.truncated
    text = ht.value()
    assert text.startswith("abcde") and text.endswith("vwxyz") and "500 bytes of output omitted" in text


def test_head_tail_under_limit_is_exact() -> None:
    ht = HeadTail(10)
    ht.add(b"0123456")
    ht.add(b"789")
    assert not ht.truncated and ht.value() == "0123456789"


def test_collector_finds_markers_split_across_chunks() -> None:
    c = StreamCollector(TOKEN, 1000)
    stream = b"stray" + marker("s") + b"hello " + marker("p:42") + b"world" + marker("e:3") + b"late"
    for i in range(len(stream)):  # one byte at a time: every split position
        c.feed(stream[i : i + 1])
    c.flush()
    assert (c.started, c.ended, c.pid, c.exit_code) == (True, True, 42, 3)
    assert c.out.value() == "hello world"


def test_collector_ignores_other_tokens() -> None:
    c = StreamCollector(TOKEN, 1000)
    c.feed(b"\x1effffffffffffffff:e:1\x1e" + marker("s") + b"x" + marker("e:0"))
    assert c.exit_code == 0 and c.out.value() == "x"


def test_demuxer_reassembles_frames() -> None:
    payloads = [(1, b"out"), (2, b"err" * 1000), (1, b"")]
    wire = b"".join(struct.pack(">BxxxL", s, len(p)) + p for s, p in payloads)
    d = Demuxer()
    got = []
    for i in range(0, len(wire), 7):
        got += d.frames(wire[i : i + 7])
    assert got == payloads
