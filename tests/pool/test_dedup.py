"""MinHash, LSH banding and the SQL-backed index."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from autoenvscaling.pool import dedup
from autoenvscaling.pool.dedup import (
    SCHEMA,
    DedupConfig,
    MinHashIndex,
    band_keys,
    lsh_params,
    minhash,
    shingles,
    signature_of_text,
    similarity,
    task_text,
)
from pool_tasks import TOPICS, one_word_changed, write_task

CFG = DedupConfig()


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b)


def test_shingles_are_lowercased_word_kgrams() -> None:
    assert shingles("Write THE file, now!", 3) == {"write the file", "the file now"}
    assert shingles("two words", 3) == {"two words"}
    assert shingles("  ... ", 3) == set()


def test_signature_is_deterministic_and_sized() -> None:
    text = TOPICS["csv"][0]
    sig = signature_of_text(text, CFG)
    assert sig is not None and len(sig) == CFG.num_perm * 4
    assert sig == signature_of_text(text, CFG)
    assert signature_of_text("", CFG) is None


def test_numpy_and_stdlib_signatures_are_identical(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    texts = [TOPICS[t][0] + TOPICS[t][1] for t in TOPICS] + ["one", "a b c d e f g h"]
    fast = [signature_of_text(t, CFG) for t in texts]
    monkeypatch.setattr(dedup, "_numpy", lambda: None)
    assert [signature_of_text(t, CFG) for t in texts] == fast


def test_similarity_estimates_jaccard() -> None:
    rng = random.Random(7)
    words = [f"w{i}" for i in range(400)]
    base = [rng.choice(words) for _ in range(120)]
    for changes in (1, 5, 20, 60):
        other = list(base)
        for i in rng.sample(range(len(base)), changes):
            other[i] = "changed"
        a, b = shingles(" ".join(base), 3), shingles(" ".join(other), 3)
        sa, sb = minhash(a, 256), minhash(b, 256)
        assert sa is not None and sb is not None
        # 256 permutations: the estimate's standard deviation is at most 0.032.
        assert abs(similarity(sa, sb) - _jaccard(a, b)) < 0.15, changes


def test_lsh_params_fit_signature_and_threshold() -> None:
    bands, rows = lsh_params(0.8, 128)
    assert bands * rows <= 128
    # Chance that a pair at the threshold shares a band is high; at half the threshold, low.
    assert 1 - (1 - 0.8**rows) ** bands > 0.8
    assert 1 - (1 - 0.4**rows) ** bands < 0.01
    _, strict_rows = lsh_params(0.95, 128)
    assert strict_rows > rows


def test_band_keys_differ_per_band() -> None:
    sig = bytes(128 * 4)  # all-zero values: equal bands still give distinct keys
    keys = band_keys(sig, 14, 9)
    assert len(set(keys)) == 14


def test_task_text_reads_instruction_and_tests(tmp_path: Path) -> None:
    root = write_task(tmp_path / "t", "git")
    (root / "tests" / "fixture.bin").write_bytes(b"\xff\xfe\x00binary")
    text = task_text(root)
    assert "private key file" in text
    assert "BEGIN OPENSSH PRIVATE KEY" in text
    assert "echo solving" not in text  # the solution is not compared
    assert "FROM autoenv" not in text


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    c = sqlite3.connect(":memory:")
    for statement in SCHEMA:
        c.execute(statement)
    yield c
    c.close()


def _sig(text: str) -> bytes:
    sig = signature_of_text(text, CFG)
    assert sig is not None
    return sig


def test_index_finds_near_duplicate_and_matches_scan(conn: sqlite3.Connection) -> None:
    index = MinHashIndex(CFG)
    index.insert_many(conn, [(name, _sig(text + "\n" + test)) for name, (text, test) in TOPICS.items()])
    near = _sig(one_word_changed("csv") + "\n" + TOPICS["csv"][1])
    found = index.query(conn, near)
    assert [env_id for env_id, _ in found] == ["csv"]
    assert found[0][1] >= 0.8
    assert found == index.scan(conn, near)
    unrelated = _sig("Compile the Rust crate in /work with the nightly toolchain and fix every clippy warning.")
    assert index.query(conn, unrelated) == []
    assert index.query(conn, unrelated, threshold=0.0) == []  # no shared band: not even a candidate


def test_index_delete_and_clear(conn: sqlite3.Connection) -> None:
    index = MinHashIndex(CFG)
    sig = _sig(TOPICS["nginx"][0])
    index.insert(conn, "a", sig)
    index.insert(conn, "b", sig)
    assert [i for i, _ in index.query(conn, sig)] == ["a", "b"]
    index.delete(conn, "a")
    assert [i for i, _ in index.query(conn, sig)] == ["b"]
    assert conn.execute("SELECT COUNT(*) FROM dedup_bands WHERE env_id = 'a'").fetchone()[0] == 0
    index.clear(conn)
    assert index.query(conn, sig) == []
