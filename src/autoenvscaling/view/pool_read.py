"""The pool's catalog, read-only: a ``mode=ro`` SQLite connection (``Pool.open`` would migrate, recover and
reindex, which a viewer must never do), entries filtered by domain, status, round, pass rate, flags and text.

Names are not unique (every run's proposer calls its first proposal ``prompt-000``), so pages name an entry by its
pool id (its content hash's prefix) and show the name with the generation that wrote it (``generation_label``).
Flags include the quality probes' results stored with each entry's validation report: ``hackable`` (an exploit
passed the tests), ``unprobed`` (validated, but the probes did not run) and ``probe:<check>`` for each failed probe.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from pydantic import BaseModel

from autoenvscaling.pool.models import EnvStatus, PoolEntry
from autoenvscaling.pool.rows import COLUMNS, entry_from_row
from autoenvscaling.pool.schema import CATALOG_FILE
from autoenvscaling.validate.report import HACKABLE_PREFIX

FLAGS = {
    "calibrated": "has calibration attempts",
    "duplicate": "near-duplicate of another entry",
    "lint": "lint findings in its validation",
    "failed-checks": "failed validation checks",
    "hackable": "quality probes: an exploit passed the tests",
    "unprobed": "validated, but the quality probes did not run",
}
PROBE_PREFIX = "probe:"  # + a failed probe check (leak-answer, weak-tests, hackable:<exploit>)


class PoolFilter(BaseModel):
    domain: str = ""
    status: str = ""
    round: int | None = None
    min_pass: float | None = None
    max_pass: float | None = None
    flags: list[str] = []
    q: str = ""

    def active(self) -> bool:
        return self != PoolFilter()


@contextmanager
def catalog(pool_dir: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection that creates no file. Without a ``-wal`` file every commit is in the database file,
    which is then opened ``immutable`` (a ``mode=ro`` open would create the -wal and -shm files); while a writer
    keeps a -wal, ``mode=ro`` reads it too."""
    db = pool_dir / CATALOG_FILE
    mode = "mode=ro" if db.with_name(db.name + "-wal").exists() else "immutable=1"
    uri = f"file:{quote(str(db))}?{mode}"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
    try:
        yield conn
    finally:
        conn.close()


def all_entries(pool_dir: Path) -> list[PoolEntry]:
    with catalog(pool_dir) as conn:
        rows = conn.execute(f"SELECT {COLUMNS} FROM envs ORDER BY created_at, id").fetchall()
    return [entry_from_row(r, pool_dir / "envs") for r in rows]


def get_entry(pool_dir: Path, env_id: str) -> PoolEntry | None:
    with catalog(pool_dir) as conn:
        row = conn.execute(f"SELECT {COLUMNS} FROM envs WHERE id = ?", (env_id,)).fetchone()
    return None if row is None else entry_from_row(row, pool_dir / "envs")


def pool_headline(pool_dir: Path) -> str:
    try:
        with catalog(pool_dir) as conn:
            counts = dict(conn.execute("SELECT status, COUNT(*) FROM envs GROUP BY status").fetchall())
    except sqlite3.Error as e:
        return f"unreadable catalog: {e}"
    total = sum(counts.values())
    parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    return f"{total} environments" + (f": {parts}" if parts else "")


def flags_of(e: PoolEntry) -> set[str]:
    flags: set[str] = set()
    if e.calibration is not None and e.calibration.attempts:
        flags.add("calibrated")
    if e.duplicate_of:
        flags.add("duplicate")
    if e.validation is not None and e.validation.lint:
        flags.add("lint")
    if e.validation is not None and e.validation.failed_checks:
        flags.add("failed-checks")
    if e.validation is not None:
        probes = e.validation.probes
        if probes is None:
            flags.add("unprobed")
        else:
            flags.update(PROBE_PREFIX + f for f in probes.flags)
            if any(f.startswith(HACKABLE_PREFIX) for f in probes.flags):
                flags.add("hackable")
    return flags


def flag_choices(entries: list[PoolEntry]) -> dict[str, str]:
    """The fixed flags and every probe flag some entry carries, each with what it means."""
    probes = sorted({f for e in entries for f in flags_of(e) if f.startswith(PROBE_PREFIX)})
    return {**FLAGS, **{f: f"quality probe failed: {f.removeprefix(PROBE_PREFIX)}" for f in probes}}


def generation_label(e: PoolEntry) -> str:
    """Which generation wrote ``e``: its proposal id (the episode dir's name), round and run, as far as recorded."""
    lin = e.lineage
    parts: list[str] = [f"generation {Path(lin.proposer_episode).name}" if lin.proposer_episode else e.source]
    parts.append(f"round {e.round}")
    if lin.parent_run:
        parts.append(f"run {lin.parent_run}")
    return ", ".join(parts)


def _matches(e: PoolEntry, f: PoolFilter) -> bool:
    if f.domain and e.domain != f.domain:
        return False
    if f.status and e.status.value != f.status:
        return False
    if f.round is not None and e.round != f.round:
        return False
    if f.min_pass is not None or f.max_pass is not None:
        if e.calibration is None or not e.calibration.attempts:
            return False
        p = e.calibration.pass_rate
        if (f.min_pass is not None and p < f.min_pass) or (f.max_pass is not None and p > f.max_pass):
            return False
    if f.flags and not set(f.flags) <= flags_of(e):
        return False
    if f.q:
        words = f.q.lower().split()
        text = f"{e.name}\n{e.id}\n{e.instruction}".lower()
        return all(w in text for w in words)
    return True


class PoolListing(BaseModel):
    entries: list[PoolEntry]
    flags: dict[str, list[str]]  # id -> its flags, for the listed entries
    labels: dict[str, str]  # id -> generation_label
    shared_names: dict[str, int]  # names more than one entry of the pool has -> how many
    flag_choices: dict[str, str]
    total: int
    domains: list[str]
    statuses: list[str]
    rounds: list[int]
    by_status: dict[str, int]


def list_entries(pool_dir: Path, f: PoolFilter) -> PoolListing:
    """The entries ``f`` matches; a flag no entry could carry is dropped from ``f`` (``f.flags`` is updated)."""
    entries = all_entries(pool_dir)
    choices = flag_choices(entries)
    f.flags = [x for x in f.flags if x in choices]
    listed = [e for e in entries if _matches(e, f)]
    names = Counter(e.name for e in entries)
    return PoolListing(
        entries=listed,
        flags={e.id: sorted(flags_of(e)) for e in listed},
        labels={e.id: generation_label(e) for e in listed},
        shared_names={n: c for n, c in names.items() if c > 1},
        flag_choices=choices,
        total=len(entries),
        domains=sorted({e.domain for e in entries}),
        statuses=[s.value for s in EnvStatus],
        rounds=sorted({e.round for e in entries}),
        by_status=dict(Counter(e.status.value for e in entries)),
    )
