"""Near-duplicate matching for the catalog: MinHash/LSH always, sentence embeddings when configured.

Only entries whose status blocks (see ``NON_BLOCKING``) count as matches: a broken environment may be
resubmitted fixed, and a duplicate is represented by the entry it duplicates.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from autoenvscaling.pool.dedup import DedupConfig, MinHashIndex, task_text
from autoenvscaling.pool.models import DuplicateMethod, EnvStatus
from autoenvscaling.pool.semantic import Embedder, MiniLMEmbedder, SemanticIndex

NON_BLOCKING = frozenset({EnvStatus.INVALID, EnvStatus.DUPLICATE})
_CHUNK = 900


@dataclass(frozen=True)
class Fingerprint:
    """What an environment is compared by: its MinHash signature and, optionally, an instruction embedding."""

    sig: bytes | None
    vec: bytes | None = None


@dataclass(frozen=True)
class Match:
    env_id: str
    similarity: float  # estimated Jaccard (minhash) or cosine (semantic)
    method: DuplicateMethod


class Matcher:
    def __init__(self, config: DedupConfig, embedder: Embedder | None = None) -> None:
        self.config = config
        self.minhash = MinHashIndex(config)
        self.semantic: SemanticIndex | None = None
        if config.semantic_threshold is not None:
            self.semantic = SemanticIndex(embedder or MiniLMEmbedder(), config.semantic_threshold)

    def fingerprint(self, task_root: Path, instruction: str) -> Fingerprint:
        sig = self.minhash.signature(task_text(task_root, self.config.leave_out))
        vec = self.semantic.embed(instruction) if self.semantic is not None else None
        return Fingerprint(sig=sig, vec=vec)

    def store(self, conn: sqlite3.Connection, env_id: str, fp: Fingerprint) -> None:
        if fp.sig is not None:
            self.minhash.insert(conn, env_id, fp.sig)
        if fp.vec is not None and self.semantic is not None:
            self.semantic.insert(conn, env_id, fp.vec)

    def clear(self, conn: sqlite3.Connection) -> None:
        self.minhash.clear(conn)
        if self.semantic is not None:
            self.semantic.clear(conn)

    def matches(
        self, conn: sqlite3.Connection, fp: Fingerprint, threshold: float | None = None, *, exclude: str = ""
    ) -> list[Match]:
        """Blocking entries similar to ``fp``: MinHash matches first, then semantic ones MinHash missed."""
        found: list[Match] = []
        if fp.sig is not None:
            found += [Match(i, s, "minhash") for i, s in self.minhash.query(conn, fp.sig, threshold)]
        if fp.vec is not None and self.semantic is not None:
            seen = {m.env_id for m in found}
            found += [Match(i, s, "semantic") for i, s in self.semantic.query(conn, fp.vec) if i not in seen]
        found = [m for m in found if m.env_id != exclude]
        blocking = _blocking_ids(conn, [m.env_id for m in found])
        return [m for m in found if m.env_id in blocking]


def _blocking_ids(conn: sqlite3.Connection, ids: list[str]) -> set[str]:
    out: set[str] = set()
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        rows = conn.execute(f"SELECT id, status FROM envs WHERE id IN ({','.join('?' * len(chunk))})", chunk)
        out |= {env_id for env_id, status in rows if EnvStatus(status) not in NON_BLOCKING}
    return out
