"""Near-duplicate index at scale: insert and query latency of the pool's MinHash/LSH index (SQLite bands table)
at N entries, against an in-memory LSH rebuilt from the same tables and a brute-force scan baseline.

    python benchmarks/pool_scale.py [--n 100000] [--queries 500] [--inserts 1000] [--json out.json]

Entries are synthetic (Zipf-distributed words from a 20k vocabulary, 120-280 words each, 10% of them one-word
mutations of an earlier entry, like a pool where proposers resubmit variants). Only the index tables are filled:
no task dirs are needed to measure the index. Half of the queries are one-word mutations of a stored entry (each
should be found), half are fresh texts (none should be).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from itertools import accumulate
from pathlib import Path
from typing import TypeVar

from autoenvscaling.pool import schema
from autoenvscaling.pool.dedup import DedupConfig, MinHashIndex, band_keys, signature_of_text, similarity

CFG = DedupConfig()
VOCAB = [f"{a}{b}{c}" for a in "bcdfghjklmnprstvz" for b in ("a", "e", "i", "o", "u", "ai", "ou") for c in
         ("n", "r", "s", "t", "l", "m", "k", "x", "nd", "st", "rk", "mp")]  # fmt: skip
VOCAB = [f"{w}{s}" for w in VOCAB for s in ("", "er", "ing", "ed", "ly", "ion", "s", "al", "ize", "ous", "ic")][:20_000]
CUM = list(accumulate(1.0 / (rank + 1) for rank in range(len(VOCAB))))  # Zipf, like real text
DUP_SHARE = 0.10
T = TypeVar("T")


def _fresh(rng: random.Random) -> str:
    return " ".join(rng.choices(VOCAB, cum_weights=CUM, k=rng.randint(120, 280)))


def _mutate(text: str, rng: random.Random) -> str:
    words = text.split()
    words[rng.randrange(len(words))] = rng.choice(VOCAB)
    return " ".join(words)


def synth_text(seed: int, i: int) -> str:
    rng = random.Random(seed * 1_000_003 + i)
    if i > 0 and rng.random() < DUP_SHARE:
        return _mutate(synth_text(seed, rng.randrange(i)), rng)
    return _fresh(rng)


def _signatures(args: tuple[int, int, int]) -> list[tuple[str, bytes]]:
    seed, start, stop = args
    out = []
    for i in range(start, stop):
        sig = signature_of_text(synth_text(seed, i), CFG)
        assert sig is not None
        out.append((f"e{i:07d}", sig))
    return out


def fill(conn: sqlite3.Connection, index: MinHashIndex, n: int, seed: int, workers: int) -> float:
    chunks = [(seed, s, min(s + 2000, n)) for s in range(0, n, 2000)]
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for items in pool.map(_signatures, chunks):
            conn.execute("BEGIN IMMEDIATE")
            index.insert_many(conn, items)
            conn.execute("COMMIT")
    return time.perf_counter() - start


def stats(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {"p50_ms": statistics.median(ms), "p99_ms": ms[min(len(ms) - 1, int(len(ms) * 0.99))], "n": len(ms)}


def timed(fn: Callable[..., T], *args: object) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--inserts", type=int, default=1000)
    ap.add_argument("--brute-queries", type=int, default=20, help="the scan takes ~1 s per query at 100k")
    ap.add_argument("--workers", type=int, default=2, help="processes computing the fill's signatures")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--db", type=Path, help="catalog file to fill (default: a temporary one)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = run(args, args.db or Path(tmp) / "catalog.sqlite")
    print_table(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {args.json}")


def run(args: argparse.Namespace, db: Path) -> dict[str, object]:
    t_total = time.perf_counter()
    conn = schema.connect(db)
    schema.migrate(conn)
    index = MinHashIndex(CFG)
    fill_s = fill(conn, index, args.n, args.seed, args.workers)
    print(f"filled {args.n} entries in {fill_s:.1f} s", flush=True)

    rng = random.Random(args.seed + 7)
    planted = [i % 2 == 0 for i in range(args.queries)]
    texts = [_mutate(synth_text(args.seed, rng.randrange(args.n)), rng) if p else _fresh(rng) for p in planted]
    sig_times: list[float] = []
    sigs: list[bytes] = []
    for text in texts:
        dt, sig = timed(signature_of_text, text, CFG)
        assert sig is not None
        sig_times.append(dt)
        sigs.append(sig)

    sql_times: list[float] = []
    sql_hits: list[list[tuple[str, float]]] = []
    for sig in sigs:
        dt, hits = timed(index.query, conn, sig)
        sql_times.append(dt)
        sql_hits.append(hits)

    build_s, (buckets, stored) = timed(build_memory_index, conn)
    mem_times = [timed(memory_query, buckets, stored, sig)[0] for sig in sigs]

    brute_times: list[float] = []
    recall_num = recall_den = 0
    for k in range(min(args.brute_queries, len(sigs))):
        dt, truth = timed(brute, stored, sigs[k])
        brute_times.append(dt)
        truth_ids = {i for i, _ in truth}
        recall_den += len(truth_ids)
        recall_num += len(truth_ids & {i for i, _ in sql_hits[k]})

    numpy_times = numpy_scan_times(stored, sigs)

    insert_times: list[float] = []
    add_times: list[float] = []
    for k in range(args.inserts):
        insert_times.append(timed(insert, conn, index, f"n{k}", fresh_sig(rng), False)[0])
        add_times.append(timed(insert, conn, index, f"a{k}", fresh_sig(rng), True)[0])
    conn.close()

    found_planted = sum(bool(h) for h, p in zip(sql_hits, planted, strict=True) if p)
    false_fresh = sum(bool(h) for h, p in zip(sql_hits, planted, strict=True) if not p)
    sql, br = stats(sql_times), stats(brute_times)
    return {
        "n": args.n,
        "banding": {"bands": index.bands, "rows": index.rows, "num_perm": CFG.num_perm, "k": CFG.shingle_k},
        "fill_s": fill_s,
        "signature": stats(sig_times),
        "query_sql_lsh": sql,
        "query_memory_lsh": stats(mem_times),
        "memory_index_build_s": build_s,
        "query_brute_force": br,
        "query_brute_force_numpy": stats(numpy_times) if numpy_times else None,
        "speedup_p50_brute_vs_sql": br["p50_ms"] / sql["p50_ms"],
        "speedup_p50_numpy_scan_vs_sql": stats(numpy_times)["p50_ms"] / sql["p50_ms"] if numpy_times else None,
        "insert": stats(insert_times),
        "query_then_insert": stats(add_times),
        "planted_found": f"{found_planted}/{sum(planted)}",
        "fresh_matched": f"{false_fresh}/{len(planted) - sum(planted)}",
        "recall_vs_brute_force": recall_num / recall_den if recall_den else None,
        "db_mb": db.stat().st_size / 1e6,
        "total_s": time.perf_counter() - t_total,
    }


def fresh_sig(rng: random.Random) -> bytes:
    sig = signature_of_text(_fresh(rng), CFG)
    assert sig is not None
    return sig


def insert(conn: sqlite3.Connection, index: MinHashIndex, env_id: str, sig: bytes, query_first: bool) -> None:
    """One insert in its own write transaction; ``query_first`` is the add path (minus file copies)."""
    conn.execute("BEGIN IMMEDIATE")
    if query_first:
        index.query(conn, sig)
    index.insert(conn, env_id, sig)
    conn.execute("COMMIT")


def build_memory_index(conn: sqlite3.Connection) -> tuple[dict[int, list[str]], dict[str, bytes]]:
    buckets: dict[int, list[str]] = defaultdict(list)
    for key, env_id in conn.execute("SELECT key, env_id FROM dedup_bands"):
        buckets[key].append(env_id)
    return buckets, dict(conn.execute("SELECT env_id, sig FROM dedup_signatures").fetchall())


def memory_query(buckets: dict[int, list[str]], stored: dict[str, bytes], sig: bytes) -> list[tuple[str, float]]:
    cands = {c for key in band_keys(sig, *CFG.banding) for c in buckets.get(key, ())}
    return [(c, s) for c in cands if (s := similarity(sig, stored[c])) >= CFG.threshold]


def brute(stored: dict[str, bytes], sig: bytes) -> list[tuple[str, float]]:
    return [(c, s) for c, other in stored.items() if (s := similarity(sig, other)) >= CFG.threshold]


def numpy_scan_times(stored: dict[str, bytes], sigs: list[bytes]) -> list[float]:
    """A vectorized scan, the strongest brute force: all signatures as one uint32 matrix (needs numpy)."""
    try:
        import numpy as np
    except ImportError:
        return []
    matrix = np.frombuffer(b"".join(stored.values()), dtype="<u4").reshape(len(stored), -1)
    ids = list(stored)

    def scan(sig: bytes) -> list[str]:
        sims = (matrix == np.frombuffer(sig, dtype="<u4")).mean(axis=1)
        return [ids[i] for i in np.nonzero(sims >= CFG.threshold)[0]]

    return [timed(scan, sig)[0] for sig in sigs[:100]]


def print_table(r: dict[str, object]) -> None:
    print(f"\nnear-duplicate index at n={r['n']}  banding={r['banding']}")
    print(f"{'operation':<34}{'p50 ms':>10}{'p99 ms':>10}{'samples':>9}")
    for key, label in (
        ("signature", "signature (MinHash of a text)"),
        ("query_sql_lsh", "query: LSH bands in SQLite"),
        ("query_memory_lsh", "query: LSH in memory"),
        ("query_brute_force", "query: brute-force scan"),
        ("query_brute_force_numpy", "query: brute-force scan (numpy)"),
        ("insert", "insert (one transaction each)"),
        ("query_then_insert", "query + insert under write lock"),
    ):
        s = r[key]
        if s is None:
            continue
        assert isinstance(s, dict)
        print(f"{label:<34}{s['p50_ms']:>10.3f}{s['p99_ms']:>10.3f}{s['n']:>9}")
    print(f"brute force / SQL LSH (p50): {r['speedup_p50_brute_vs_sql']:.0f}x")
    if r["speedup_p50_numpy_scan_vs_sql"] is not None:
        print(f"numpy scan / SQL LSH (p50): {r['speedup_p50_numpy_scan_vs_sql']:.1f}x")
    print(f"in-memory LSH rebuild from the db: {r['memory_index_build_s']:.1f} s")
    print(f"planted near-duplicates found: {r['planted_found']}; fresh texts matched: {r['fresh_matched']}")
    print(f"recall vs brute force: {r['recall_vs_brute_force']}")
    print(f"fill {r['fill_s']:.1f} s, db {r['db_mb']:.0f} MB, total {r['total_s']:.1f} s")


if __name__ == "__main__":
    main()
