"""The catalog's SQLite schema, versioned in the ``meta`` table and upgraded by numbered migrations."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from autoenvscaling.pool import dedup, semantic
from autoenvscaling.pool.errors import PoolError

BUSY_TIMEOUT_MS = 30_000
CATALOG_FILE = "catalog.sqlite"  # in the pool's root, beside envs/


def is_pool(root: Path) -> bool:
    """Whether ``root`` holds a pool's catalog."""
    return (root / CATALOG_FILE).is_file()


# Version -> statements that take a catalog from version-1 to version. Append, never edit a shipped one.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE envs (
            id TEXT PRIMARY KEY,
            content_hash TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            domain TEXT NOT NULL DEFAULT '',
            round INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            source TEXT NOT NULL,
            lineage TEXT NOT NULL,
            validation TEXT,
            calibration TEXT,
            duplicate_of TEXT,
            similarity REAL,
            instruction TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX envs_status ON envs (status)",
        "CREATE INDEX envs_domain_round ON envs (domain, round)",
        *dedup.SCHEMA,
    ),
    2: (
        *semantic.SCHEMA,
        "ALTER TABLE envs ADD COLUMN duplicate_method TEXT",
    ),
}
SCHEMA_VERSION = max(MIGRATIONS)


def connect(db_path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit ``BEGIN IMMEDIATE``), WAL, busy timeout."""
    conn = sqlite3.connect(db_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    # WAL + NORMAL survives a process crash; only an OS crash can lose the last commits.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the catalog to SCHEMA_VERSION; returns the version it had before (0 for a new one)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        raw = get_meta(conn, "schema_version")
        before = int(raw) if raw is not None else 0
        if before > SCHEMA_VERSION:
            raise PoolError(
                f"catalog schema version {before} is newer than this autoenvscaling supports ({SCHEMA_VERSION})"
            )
        for version in range(before + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
        set_meta(conn, "schema_version", str(SCHEMA_VERSION))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return before
