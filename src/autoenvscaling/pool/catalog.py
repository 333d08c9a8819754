"""The environment pool: a SQLite catalog (``catalog.sqlite``) over Harbor task dirs in ``envs/<id>/``.

An environment's id is the first 16 hex digits of its content hash (the full hash is stored too), so adding the
same files twice finds the first entry. Writes are ``BEGIN IMMEDIATE`` transactions; the staged task dir is
renamed into place inside the transaction, so a crash leaves nothing that the next ``open`` does not remove.
"""

from __future__ import annotations

import builtins
import shutil
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from autoenvscaling.errors import UserInputError
from autoenvscaling.pool import schema, storage
from autoenvscaling.pool.dedup import DedupConfig
from autoenvscaling.pool.errors import PoolError, UnknownEnvError
from autoenvscaling.pool.matcher import Fingerprint, Matcher
from autoenvscaling.pool.models import (
    AddResult,
    Calibration,
    CalibrationBand,
    EnvSource,
    EnvStatus,
    Lineage,
    NearDuplicatePolicy,
    PoolEntry,
)
from autoenvscaling.pool.rows import COLUMNS, entry_from_row
from autoenvscaling.pool.semantic import Embedder
from autoenvscaling.tasks.model import Task, load_task, task_content_hash
from autoenvscaling.validate.report import ValidationReport, Verdict

ID_LEN = 16
# Statuses that a validation or calibration result may overwrite.
_VALIDATION_MUTABLE = frozenset({EnvStatus.CANDIDATE, EnvStatus.VALID, EnvStatus.INVALID})
_CALIBRATION_FROZEN = frozenset({EnvStatus.RETIRED, EnvStatus.DUPLICATE, EnvStatus.INVALID})

StatusFilter = EnvStatus | str | Iterable[EnvStatus | str] | None


@dataclass(frozen=True)
class _Pending:
    """A staged task on its way into the catalog."""

    task: Task
    content_hash: str
    fingerprint: Fingerprint
    domain: str
    round: int
    source: EnvSource
    lineage: Lineage

    @property
    def id(self) -> str:
        return self.content_hash[:ID_LEN]


def _now() -> str:
    return datetime.now(UTC).isoformat()


def parse_statuses(status: StatusFilter) -> builtins.list[EnvStatus] | None:
    """The statuses a filter names (None: no filter); an unknown name is a UserInputError."""
    if status is None:
        return None
    if isinstance(status, EnvStatus | str):
        status = [status]
    try:
        return [EnvStatus(s) for s in status]
    except ValueError as e:
        raise UserInputError(f"{e}; statuses are {', '.join(s.value for s in EnvStatus)}") from None


class Pool:
    """Open with ``Pool.open(root)``; usable from many threads (one SQLite connection per thread)."""

    def __init__(self, root: Path, dedup: DedupConfig, embedder: Embedder | None = None) -> None:
        self.root = root
        self.envs_dir = root / "envs"
        self.tmp_dir = root / "tmp"
        self.db_path = root / schema.CATALOG_FILE
        self.dedup = dedup
        self.matcher = Matcher(dedup, embedder)
        self._local = threading.local()
        self._conns: builtins.list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, root: Path | str, *, dedup: DedupConfig | None = None, embedder: Embedder | None = None) -> Pool:
        """Create or open the pool at ``root``; removes what a crashed writer left behind.

        ``dedup`` None keeps the pool's stored settings; a different one rebuilds the dedup index.
        ``embedder`` serves ``dedup.semantic_threshold`` (default: MiniLM, extra ``semantic``).
        """
        root = Path(root).resolve()
        root.mkdir(parents=True, exist_ok=True)
        (root / "envs").mkdir(exist_ok=True)
        conn = schema.connect(root / schema.CATALOG_FILE)
        try:
            schema.migrate(conn)
            stored = schema.get_meta(conn, "dedup_config")
        finally:
            conn.close()
        stored_cfg = None if stored is None else DedupConfig.stored(stored)
        pool = cls(root, dedup or stored_cfg or DedupConfig(), embedder)
        try:
            pool._recover()
            if stored_cfg is None or stored_cfg != pool.dedup:
                pool.reindex()
        except BaseException:
            pool.close()
            raise
        return pool

    def close(self) -> None:
        with self._conns_lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()
        self._local = threading.local()

    def __enter__(self) -> Pool:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = schema.connect(self.db_path)
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _recover(self) -> None:
        storage.clean_staging(self.tmp_dir)
        with self._write() as conn:
            ids = {r[0] for r in conn.execute("SELECT id FROM envs")}
            storage.remove_orphans(self.envs_dir, ids)

    def reindex(self) -> int:
        """Recompute every fingerprint from the env dirs under the current settings; returns how many.

        Fingerprints are computed before the write lock is taken (an embedding model may load for a while),
        then entries added in the meantime are fingerprinted under the lock.
        """
        fps = self._fingerprints(self._conn().execute("SELECT id, instruction FROM envs").fetchall())
        with self._write() as conn:
            rows = conn.execute("SELECT id, instruction FROM envs").fetchall()
            fps.update(self._fingerprints([r for r in rows if r[0] not in fps]))
            self.matcher.clear(conn)
            for env_id, fp in fps.items():
                self.matcher.store(conn, env_id, fp)
            schema.set_meta(conn, "dedup_config", self.dedup.model_dump_json())
        return len(fps)

    def _fingerprints(self, rows: Iterable[tuple[str, str]]) -> dict[str, Fingerprint]:
        return {
            env_id: self.matcher.fingerprint(self.envs_dir / env_id, instruction)
            for env_id, instruction in rows
            if (self.envs_dir / env_id).is_dir()
        }

    # -- adding ----------------------------------------------------------------------------------------------

    def add(
        self,
        task_dir: Path | str,
        *,
        domain: str = "",
        round: int = 0,
        source: EnvSource = "proposer",
        lineage: Lineage | None = None,
        near_duplicate: NearDuplicatePolicy = "store",
    ) -> AddResult:
        """Copy a Harbor task dir into the pool.

        An exact duplicate (same content hash) is a no-op that returns the existing id. A near-duplicate is
        stored with status ``duplicate`` (``near_duplicate="store"``), not stored (``"reject"``), or stored as
        a plain candidate (``"ignore"``).
        """
        task = load_task(task_dir)
        src = str(task.paths.root)
        stage = storage.stage_copy(task.paths.root, self.tmp_dir)
        try:
            content_hash = task_content_hash(stage)
            existing = self._id_by_hash(self._conn(), content_hash)
            if existing is not None:
                return AddResult(id=existing, outcome="exact-duplicate", added=False, source_path=src,
                                 duplicate_of=existing, status=self.get(existing).status)  # fmt: skip
            pending = _Pending(
                task=task,
                content_hash=content_hash,
                fingerprint=self.matcher.fingerprint(stage, task.instruction),
                domain=domain,
                round=round,
                source=source,
                lineage=(lineage or Lineage()).model_copy(update={"origin_path": src}),
            )
            return self._commit(stage, pending, near_duplicate)
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def _commit(self, stage: Path, pending: _Pending, policy: NearDuplicatePolicy) -> AddResult:
        dest = self.envs_dir / pending.id
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        moved = False
        try:
            result = self._insert_row(conn, pending, policy)
            if result.added:
                if dest.exists():  # a crashed writer's leftover: we hold the write lock, nobody else owns it
                    shutil.rmtree(dest)
                stage.rename(dest)
                moved = True
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if moved:
                shutil.rmtree(dest, ignore_errors=True)
            raise
        return result

    def _insert_row(self, conn: sqlite3.Connection, p: _Pending, policy: NearDuplicatePolicy) -> AddResult:
        src = str(p.task.paths.root)
        existing = self._id_by_hash(conn, p.content_hash)  # another writer may have won the race
        if existing is not None:
            return AddResult(id=existing, outcome="exact-duplicate", added=False, source_path=src,
                             duplicate_of=existing, status=self._status(conn, existing))  # fmt: skip
        if conn.execute("SELECT 1 FROM envs WHERE id = ?", (p.id,)).fetchone():
            raise PoolError(f"id collision: {p.id} is taken by other content")
        near = self.matcher.matches(conn, p.fingerprint) if policy != "ignore" else []
        best = near[0] if near else None
        dup_of, sim, method = (None, None, None) if best is None else (best.env_id, best.similarity, best.method)
        if best is not None and policy == "reject":
            return AddResult(id=p.id, outcome="rejected", added=False, source_path=src,
                             duplicate_of=dup_of, similarity=sim, duplicate_method=method)  # fmt: skip
        status = EnvStatus.DUPLICATE if best else EnvStatus.CANDIDATE
        now = _now()
        conn.execute(
            f"INSERT INTO envs ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?)",
            (p.id, p.content_hash, p.task.name, p.domain, p.round, status.value, now, now, p.source,
             p.lineage.model_dump_json(), dup_of, sim, method, p.task.instruction),
        )  # fmt: skip
        self.matcher.store(conn, p.id, p.fingerprint)
        return AddResult(id=p.id, outcome="near-duplicate" if best else "added", added=True, status=status,
                         source_path=src, duplicate_of=dup_of, similarity=sim, duplicate_method=method)  # fmt: skip

    def _id_by_hash(self, conn: sqlite3.Connection, content_hash: str) -> str | None:
        row = conn.execute("SELECT id FROM envs WHERE content_hash = ?", (content_hash,)).fetchone()
        return None if row is None else str(row[0])

    def _status(self, conn: sqlite3.Connection, env_id: str) -> EnvStatus:
        return EnvStatus(conn.execute("SELECT status FROM envs WHERE id = ?", (env_id,)).fetchone()[0])

    def near_duplicates(
        self, task: Task | Path | str, *, threshold: float | None = None
    ) -> builtins.list[tuple[str, float]]:
        """Blocking pool entries (other than the task itself) similar to ``task``, most similar first.

        ``threshold`` overrides the MinHash threshold; far below the configured one, LSH misses matches.
        """
        loaded = task if isinstance(task, Task) else load_task(task)
        fp = self.matcher.fingerprint(loaded.paths.root, loaded.instruction)
        own = task_content_hash(loaded.paths.root)[:ID_LEN]
        return [(m.env_id, m.similarity) for m in self.matcher.matches(self._conn(), fp, threshold, exclude=own)]

    # -- reading ---------------------------------------------------------------------------------------------

    def resolve_id(self, env_id: str) -> str:
        """The full id for ``env_id`` or a unique prefix of one."""
        conn = self._conn()
        if conn.execute("SELECT 1 FROM envs WHERE id = ?", (env_id,)).fetchone():
            return env_id
        pattern = env_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = conn.execute("SELECT id FROM envs WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (pattern,)).fetchall()
        if len(rows) == 1:
            return str(rows[0][0])
        what = "is ambiguous" if rows else "is not in the pool"
        raise UnknownEnvError(f"environment {env_id!r} {what} ({self.root})")

    def get(self, env_id: str) -> PoolEntry:
        full = self.resolve_id(env_id)
        row = self._conn().execute(f"SELECT {COLUMNS} FROM envs WHERE id = ?", (full,)).fetchone()
        if row is None:
            raise UnknownEnvError(f"environment {env_id!r} is not in the pool ({self.root})")
        return entry_from_row(row, self.envs_dir)

    def list(
        self, *, status: StatusFilter = None, domain: str | None = None, round: int | None = None
    ) -> builtins.list[PoolEntry]:
        """Entries matching every given filter, oldest first."""
        where: builtins.list[str] = []
        args: builtins.list[object] = []
        statuses = parse_statuses(status)
        if statuses is not None:
            where.append(f"status IN ({','.join('?' * len(statuses))})")
            args += [s.value for s in statuses]
        if domain is not None:
            where.append("domain = ?")
            args.append(domain)
        if round is not None:
            where.append("round = ?")
            args.append(round)
        sql = f"SELECT {COLUMNS} FROM envs" + (f" WHERE {' AND '.join(where)}" if where else "")
        rows = self._conn().execute(sql + " ORDER BY created_at, id", args).fetchall()
        return [entry_from_row(r, self.envs_dir) for r in rows]

    def count(self, *, status: StatusFilter = None) -> int:
        statuses = parse_statuses(status)
        if statuses is None:
            return int(self._conn().execute("SELECT COUNT(*) FROM envs").fetchone()[0])
        marks = ",".join("?" * len(statuses))
        sql = f"SELECT COUNT(*) FROM envs WHERE status IN ({marks})"
        return int(self._conn().execute(sql, [s.value for s in statuses]).fetchone()[0])

    # -- updating --------------------------------------------------------------------------------------------

    def _update(self, env_id: str, **fields: object) -> PoolEntry:
        full = self.resolve_id(env_id)
        sets = ", ".join(f"{k} = ?" for k in fields)
        with self._write() as conn:
            conn.execute(f"UPDATE envs SET {sets}, updated_at = ? WHERE id = ?", [*fields.values(), _now(), full])
        return self.get(full)

    def set_status(self, env_id: str, status: EnvStatus | str) -> PoolEntry:
        (new,) = parse_statuses(status) or [EnvStatus.CANDIDATE]
        return self._update(env_id, status=new.value)

    def retire(self, env_id: str) -> PoolEntry:
        return self.set_status(env_id, EnvStatus.RETIRED)

    def record_validation(self, env_id: str, report: ValidationReport) -> PoolEntry:
        """Store the report; a candidate/valid/invalid entry becomes valid or invalid by its verdict.

        An ``error`` verdict is an infrastructure failure and leaves the status as it was.
        """
        entry = self.get(env_id)
        if report.content_hash is not None and report.content_hash != entry.content_hash:
            raise PoolError(f"{entry.id}: the validation report is for other content ({report.content_hash[:16]})")
        fields: dict[str, object] = {"validation": report.model_dump_json()}
        if entry.status in _VALIDATION_MUTABLE and report.verdict != Verdict.ERROR:
            fields["status"] = (EnvStatus.VALID if report.is_valid else EnvStatus.INVALID).value
        return self._update(entry.id, **fields)

    def record_calibration(
        self, env_id: str, calibration: Calibration, *, band: CalibrationBand | None = None
    ) -> PoolEntry:
        """Store the solver's attempts; the status becomes learnable / too-easy / too-hard by ``band``."""
        entry = self.get(env_id)
        fields: dict[str, object] = {"calibration": calibration.model_dump_json()}
        if entry.status not in _CALIBRATION_FROZEN:
            fields["status"] = (band or CalibrationBand()).classify(calibration).value
        return self._update(entry.id, **fields)

    # -- datasets --------------------------------------------------------------------------------------------

    def import_dataset(
        self, dataset_dir: Path | str, *, domain: str = "", round: int = 0, source: EnvSource = "import"
    ) -> builtins.list[AddResult]:
        """Add every task dir found in ``dataset_dir`` (a Harbor dataset: a dir of task dirs)."""
        from autoenvscaling.tasks.model import find_task_dirs

        return [self.add(t, domain=domain, round=round, source=source) for t in find_task_dirs([Path(dataset_dir)])]
