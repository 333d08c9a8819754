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
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from autoenvscaling.errors import UserInputError
from autoenvscaling.pool import schema, storage
from autoenvscaling.pool.dedup import DedupConfig, MinHashIndex, task_text
from autoenvscaling.pool.errors import PoolError, UnknownEnvError
from autoenvscaling.pool.models import (
    AddResult,
    Calibration,
    CalibrationBand,
    DatasetManifest,
    EnvSource,
    EnvStatus,
    Lineage,
    NearDuplicatePolicy,
    PoolEntry,
)
from autoenvscaling.pool.rows import COLUMNS, entry_from_row
from autoenvscaling.tasks.model import Task, load_task, task_content_hash
from autoenvscaling.validate.report import ValidationReport, Verdict

ID_LEN = 16
# Entries that do not make a new environment a near-duplicate: a broken environment may be resubmitted fixed,
# and a duplicate points at the entry it duplicates, which is matched itself.
NON_BLOCKING = frozenset({EnvStatus.INVALID, EnvStatus.DUPLICATE})
# Statuses that a validation or calibration result may overwrite.
_VALIDATION_MUTABLE = frozenset({EnvStatus.CANDIDATE, EnvStatus.VALID, EnvStatus.INVALID})
_CALIBRATION_FROZEN = frozenset({EnvStatus.RETIRED, EnvStatus.DUPLICATE, EnvStatus.INVALID})

StatusFilter = EnvStatus | str | Iterable[EnvStatus | str] | None


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _statuses(status: StatusFilter) -> builtins.list[EnvStatus] | None:
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

    def __init__(self, root: Path, dedup: DedupConfig) -> None:
        self.root = root
        self.envs_dir = root / "envs"
        self.tmp_dir = root / "tmp"
        self.db_path = root / "catalog.sqlite"
        self.dedup = dedup
        self.index = MinHashIndex(dedup)
        self._local = threading.local()
        self._conns: builtins.list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, root: Path | str, *, dedup: DedupConfig | None = None) -> Pool:
        """Create or open the pool at ``root``; removes what a crashed writer left behind.

        ``dedup`` None keeps the pool's stored settings; a different one rebuilds the dedup index.
        """
        root = Path(root).resolve()
        root.mkdir(parents=True, exist_ok=True)
        (root / "envs").mkdir(exist_ok=True)
        conn = schema.connect(root / "catalog.sqlite")
        try:
            schema.migrate(conn)
            stored = schema.get_meta(conn, "dedup_config")
        finally:
            conn.close()
        stored_cfg = None if stored is None else DedupConfig.model_validate_json(stored)
        pool = cls(root, dedup or stored_cfg or DedupConfig())
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
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _recover(self) -> None:
        storage.clean_staging(self.tmp_dir)
        with self._write() as conn:
            ids = {r[0] for r in conn.execute("SELECT id FROM envs")}
            storage.remove_orphans(self.envs_dir, ids)

    def reindex(self) -> int:
        """Recompute every dedup signature from the env dirs under the current settings; returns how many."""
        count = 0
        with self._write() as conn:
            self.index.clear(conn)
            for (env_id,) in conn.execute("SELECT id FROM envs").fetchall():
                env_dir = self.envs_dir / env_id
                sig = self.index.signature(task_text(env_dir)) if env_dir.is_dir() else None
                if sig is not None:
                    self.index.insert(conn, env_id, sig)
                    count += 1
            schema.set_meta(conn, "dedup_config", self.dedup.model_dump_json())
        return count

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
            sig = self.index.signature(task_text(stage))
            lineage = (lineage or Lineage()).model_copy(update={"origin_path": src})
            return self._commit(stage, task, content_hash, sig, domain, round, source, lineage, near_duplicate)
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def _commit(
        self,
        stage: Path,
        task: Task,
        content_hash: str,
        sig: bytes | None,
        domain: str,
        round_: int,
        source: EnvSource,
        lineage: Lineage,
        policy: NearDuplicatePolicy,
    ) -> AddResult:
        dest = self.envs_dir / content_hash[:ID_LEN]
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        moved = False
        try:
            result = self._insert_row(conn, task, content_hash, sig, domain, round_, source, lineage, policy)
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

    def _insert_row(
        self,
        conn: sqlite3.Connection,
        task: Task,
        content_hash: str,
        sig: bytes | None,
        domain: str,
        round_: int,
        source: EnvSource,
        lineage: Lineage,
        policy: NearDuplicatePolicy,
    ) -> AddResult:
        env_id, src = content_hash[:ID_LEN], str(task.paths.root)
        existing = self._id_by_hash(conn, content_hash)  # another writer may have won the race
        if existing is not None:
            return AddResult(id=existing, outcome="exact-duplicate", added=False, source_path=src,
                             duplicate_of=existing, status=self._status(conn, existing))  # fmt: skip
        if conn.execute("SELECT 1 FROM envs WHERE id = ?", (env_id,)).fetchone():
            raise PoolError(f"id collision: {env_id} is taken by other content")
        near = self._blocking_matches(conn, sig) if policy != "ignore" and sig is not None else []
        dup_of, sim = near[0] if near else (None, None)
        if near and policy == "reject":
            return AddResult(id=env_id, outcome="rejected", added=False, source_path=src,
                             duplicate_of=dup_of, similarity=sim)  # fmt: skip
        status = EnvStatus.DUPLICATE if near else EnvStatus.CANDIDATE
        now = _now()
        conn.execute(
            f"INSERT INTO envs ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?)",
            (env_id, content_hash, task.name, domain, round_, status.value, now, now, source,
             lineage.model_dump_json(), dup_of, sim, task.instruction),
        )  # fmt: skip
        if sig is not None:
            self.index.insert(conn, env_id, sig)
        return AddResult(id=env_id, outcome="near-duplicate" if near else "added", added=True, status=status,
                         source_path=src, duplicate_of=dup_of, similarity=sim)  # fmt: skip

    def _id_by_hash(self, conn: sqlite3.Connection, content_hash: str) -> str | None:
        row = conn.execute("SELECT id FROM envs WHERE content_hash = ?", (content_hash,)).fetchone()
        return None if row is None else str(row[0])

    def _status(self, conn: sqlite3.Connection, env_id: str) -> EnvStatus:
        return EnvStatus(conn.execute("SELECT status FROM envs WHERE id = ?", (env_id,)).fetchone()[0])

    def _blocking_matches(
        self, conn: sqlite3.Connection, sig: bytes, threshold: float | None = None
    ) -> builtins.list[tuple[str, float]]:
        matches = self.index.query(conn, sig, threshold)
        if not matches:
            return []
        marks = ",".join("?" * len(matches))
        rows = conn.execute(f"SELECT id, status FROM envs WHERE id IN ({marks})", [m[0] for m in matches])
        blocking = {env_id for env_id, status in rows if EnvStatus(status) not in NON_BLOCKING}
        return [m for m in matches if m[0] in blocking]

    def near_duplicates(
        self, task: Task | Path | str, *, threshold: float | None = None
    ) -> builtins.list[tuple[str, float]]:
        """Pool entries (other than the task itself) whose estimated Jaccard similarity is >= threshold."""
        root = task.paths.root if isinstance(task, Task) else Path(task)
        sig = self.index.signature(task_text(root))
        if sig is None:
            return []
        own = task_content_hash(root)[:ID_LEN]
        return [m for m in self._blocking_matches(self._conn(), sig, threshold) if m[0] != own]

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
        statuses = _statuses(status)
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
        statuses = _statuses(status)
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
        (new,) = _statuses(status) or [EnvStatus.CANDIDATE]
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

    def export_dataset(self, dest: Path | str, *, status: StatusFilter = EnvStatus.LEARNABLE) -> DatasetManifest:
        """Copy the matching task dirs into ``dest`` (a Harbor dataset dir) and write ``dataset.json``."""
        from autoenvscaling.pool.dataset import export_dataset

        return export_dataset(self, Path(dest), _statuses(status) or builtins.list(EnvStatus))

    def export_parquet(self, path: Path | str, *, status: StatusFilter = None) -> Path:
        """One row per entry (pyarrow, from the ``report`` extra)."""
        from autoenvscaling.pool.dataset import export_parquet

        return export_parquet(self.list(status=status), Path(path))
