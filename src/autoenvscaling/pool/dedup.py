"""Near-duplicate detection: MinHash over word shingles, LSH banding stored in SQLite.

Each environment's text (instruction plus test files, less the files every environment of a kind holds
verbatim: ``shared_test_files``) becomes a set of word k-shingles. Its MinHash signature
holds, for each of ``num_perm`` hash functions, the smallest hash over the set; the share of equal positions of
two signatures estimates the Jaccard similarity of the two sets. The ``num_perm`` hash functions are the 32-bit
words of one SHAKE-128 digest per shingle, so a signature is an element-wise minimum over digests and needs
nothing beyond the standard library (numpy, where installed, computes the same minimum faster).

LSH banding: the signature is cut into ``bands`` bands of ``rows`` values; two environments become candidates
when any band is equal. A band is stored as one 64-bit key in the ``dedup_bands`` table (primary key
``(key, env_id)``), so a query is ``bands`` index look-ups in SQL, sees every committed write of every process,
and needs no index to be rebuilt on open. Candidates are then checked against the threshold with their
signatures.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import sys
from array import array
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from autoenvscaling.tasks.model import iter_task_files

_TOKEN = re.compile(r"\w+")
_MAX_TEXT_FILE = 1_000_000  # bytes; larger test files are data, not text worth comparing
_CHUNK = 900  # ids per IN (...) query, below SQLite's bound-parameter limit


class DedupConfig(BaseModel):
    """How near-duplicates are found. A pool stores these; opening it with other settings rebuilds its index."""

    num_perm: int = Field(default=128, ge=16, le=1024)
    shingle_k: int = Field(default=3, ge=1, le=10)
    threshold: float = Field(default=0.8, gt=0.0, le=1.0)
    # Weights of the false positive / false negative areas when choosing the banding. Candidates are checked
    # against their signatures, so a false positive costs one blob read while a false negative is a missed
    # duplicate: recall is weighted up.
    fp_weight: float = 0.1
    fn_weight: float = 0.9
    # Cosine similarity of instruction embeddings above which an entry is a near-duplicate too; None: off.
    semantic_threshold: float | None = Field(default=None, gt=0.0, le=1.0)
    # The sha256 of the test files left out of the compared text: code that every environment of a kind holds
    # verbatim tells no two of them apart, and a large one makes any two look alike.
    leave_out: list[Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]] = Field(
        default_factory=lambda: shared_test_files(), max_length=64
    )

    @classmethod
    def stored(cls, text: str) -> DedupConfig:
        """The settings a pool stored; one stored before ``leave_out`` existed left nothing out."""
        data = json.loads(text)
        data.setdefault("leave_out", [])
        return cls.model_validate(data)

    @property
    def banding(self) -> tuple[int, int]:
        return lsh_params(self.threshold, self.num_perm, self.fp_weight, self.fn_weight)


def _area(bands: int, rows: int, lo: float, hi: float, *, missed: bool, steps: int = 100) -> float:
    """Integral over s in [lo, hi] of P(candidate | s) = 1 - (1 - s**rows)**bands, or of 1 - that if missed."""
    width = (hi - lo) / steps
    total = 0.0
    for i in range(steps):
        p = 1.0 - (1.0 - (lo + (i + 0.5) * width) ** rows) ** bands
        total += 1.0 - p if missed else p
    return total * width


@lru_cache(maxsize=32)
def lsh_params(threshold: float, num_perm: int, fp_weight: float = 0.1, fn_weight: float = 0.9) -> tuple[int, int]:
    """(bands, rows) minimizing the weighted areas of false positives below and false negatives above threshold.

    The probability that two sets of Jaccard similarity s share a band is 1 - (1 - s**rows)**bands.
    """
    best: tuple[float, int, int] | None = None
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            fp = _area(bands, rows, 0.0, threshold, missed=False)
            fn = _area(bands, rows, threshold, 1.0, missed=True)
            err = fp_weight * fp + fn_weight * fn
            if best is None or err < best[0]:
                best = (err, bands, rows)
    assert best is not None
    return best[1], best[2]


def shingles(text: str, k: int) -> set[str]:
    """Word k-shingles of the lower-cased text; a text shorter than k words is one shingle."""
    tokens = _TOKEN.findall(text.lower())
    if not tokens:
        return set()
    if len(tokens) <= k:
        return {" ".join(tokens)}
    return {" ".join(tokens[i : i + k]) for i in range(len(tokens) - k + 1)}


def minhash(shingle_set: Iterable[str], num_perm: int) -> bytes | None:
    """The MinHash signature as ``num_perm`` little-endian uint32 values; None for an empty set."""
    size = num_perm * 4
    digests = [hashlib.shake_128(s.encode()).digest(size) for s in shingle_set]
    if not digests:
        return None
    np = _numpy()
    if np is not None:  # same values, ~50x faster minimum; numpy comes with the report extra
        return bytes(np.frombuffer(b"".join(digests), dtype="<u4").reshape(len(digests), num_perm).min(axis=0).data)
    rows = [array("I", d) for d in digests]
    if sys.byteorder == "big":
        for row in rows:
            row.byteswap()
    sig = array("I", map(min, zip(*rows, strict=True)))
    if sys.byteorder == "big":
        sig.byteswap()
    return sig.tobytes()


@lru_cache(maxsize=1)
def _numpy() -> ModuleType | None:
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def signature_of_text(text: str, config: DedupConfig) -> bytes | None:
    return minhash(shingles(text, config.shingle_k), config.num_perm)


def similarity(a: bytes, b: bytes) -> float:
    """Estimated Jaccard similarity: the share of equal signature values."""
    va, vb = array("I", a), array("I", b)
    if len(va) != len(vb) or not va:
        return 0.0
    return sum(x == y for x, y in zip(va, vb, strict=True)) / len(va)


def band_keys(sig: bytes, bands: int, rows: int) -> list[int]:
    """One signed 64-bit key per band (band number included, so equal values in different bands differ)."""
    width = rows * 4
    return [
        int.from_bytes(
            hashlib.blake2b(sig[i * width : (i + 1) * width], digest_size=8, person=i.to_bytes(4, "little")).digest(),
            "little",
            signed=True,
        )
        for i in range(bands)
    ]


def shared_test_files() -> list[str]:
    """The sha256 of the test files every environment of a kind holds verbatim: the staged proposer's output
    grader (its ``tests/test_outputs.py``, which compares the outputs recorded in ``tests/expected/``). It is
    about 2,000 of the 3,000 characters of such an environment's text, so any two of them looked alike: of a
    flywheel pool's five, an `admin` filter of a config and a status filter of a log came to 0.74, and the pool
    rejected two valid environments of a round as near-duplicates at 0.82 and 0.84 that the proposer's own
    novelty check, which leaves the grader out too, had passed (0.33 and 0.57 without it)."""
    from autoenvscaling.roles.proposer.novelty import harness_test_code

    return [hashlib.sha256(harness_test_code().encode("utf-8")).hexdigest()]


def task_text(task_dir: Path, leave_out: Iterable[str] = ()) -> str:
    """The text near-duplicates are judged on: instruction(s) and test files, in a stable order; the test
    files whose sha256 is in ``leave_out`` left out."""
    skip = frozenset(leave_out)
    parts: list[str] = []
    for path in iter_task_files(task_dir):
        rel = path.relative_to(task_dir).parts
        wanted = rel[-1] == "instruction.md" or "tests" in rel[:-1]
        if not wanted or path.stat().st_size > _MAX_TEXT_FILE:
            continue
        data = path.read_bytes()
        if skip and rel[-1] != "instruction.md" and hashlib.sha256(data).hexdigest() in skip:
            continue
        try:
            parts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            continue  # binary fixture
    return "\n".join(parts)


SCHEMA = (
    "CREATE TABLE IF NOT EXISTS dedup_signatures (env_id TEXT PRIMARY KEY, sig BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS dedup_bands (key INTEGER NOT NULL, env_id TEXT NOT NULL,"
    " PRIMARY KEY (key, env_id)) WITHOUT ROWID",
)


class MinHashIndex:
    """LSH index over the ``dedup_*`` tables of a connection. Methods run inside the caller's transaction."""

    def __init__(self, config: DedupConfig) -> None:
        self.config = config
        self.bands, self.rows = config.banding

    def signature(self, text: str) -> bytes | None:
        return signature_of_text(text, self.config)

    def insert(self, conn: sqlite3.Connection, env_id: str, sig: bytes) -> None:
        self.insert_many(conn, [(env_id, sig)])

    def insert_many(self, conn: sqlite3.Connection, items: Sequence[tuple[str, bytes]]) -> None:
        conn.executemany("INSERT OR REPLACE INTO dedup_signatures (env_id, sig) VALUES (?, ?)", items)
        conn.executemany(
            "INSERT OR IGNORE INTO dedup_bands (key, env_id) VALUES (?, ?)",
            [(key, env_id) for env_id, sig in items for key in band_keys(sig, self.bands, self.rows)],
        )

    def delete(self, conn: sqlite3.Connection, env_id: str) -> None:
        row = conn.execute("SELECT sig FROM dedup_signatures WHERE env_id = ?", (env_id,)).fetchone()
        if row is None:
            return
        keys = band_keys(row[0], self.bands, self.rows)
        conn.executemany("DELETE FROM dedup_bands WHERE key = ? AND env_id = ?", [(k, env_id) for k in keys])
        conn.execute("DELETE FROM dedup_signatures WHERE env_id = ?", (env_id,))

    def clear(self, conn: sqlite3.Connection) -> None:
        conn.execute("DELETE FROM dedup_bands")
        conn.execute("DELETE FROM dedup_signatures")

    def candidates(self, conn: sqlite3.Connection, sig: bytes) -> list[str]:
        keys = band_keys(sig, self.bands, self.rows)
        marks = ",".join("?" * len(keys))
        rows = conn.execute(f"SELECT DISTINCT env_id FROM dedup_bands WHERE key IN ({marks})", keys).fetchall()
        return [r[0] for r in rows]

    def query(self, conn: sqlite3.Connection, sig: bytes, threshold: float | None = None) -> list[tuple[str, float]]:
        """Environments whose estimated similarity to ``sig`` is at least ``threshold``, most similar first."""
        cut = self.config.threshold if threshold is None else threshold
        ids = self.candidates(conn, sig)
        found: list[tuple[str, float]] = []
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(f"SELECT env_id, sig FROM dedup_signatures WHERE env_id IN ({marks})", chunk)
            found += [(env_id, sim) for env_id, other in rows if (sim := similarity(sig, other)) >= cut]
        return _rank(found)

    def scan(self, conn: sqlite3.Connection, sig: bytes, threshold: float | None = None) -> list[tuple[str, float]]:
        """Brute force over every stored signature: the baseline the LSH query is measured against."""
        cut = self.config.threshold if threshold is None else threshold
        rows = conn.execute("SELECT env_id, sig FROM dedup_signatures")
        return _rank((env_id, sim) for env_id, other in rows if (sim := similarity(sig, other)) >= cut)


def _rank(pairs: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    return sorted(pairs, key=lambda p: (-p[1], p[0]))
