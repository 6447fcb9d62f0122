"""SQLiteCheckpointer: the embedded default, one file, safe for many threads and processes.

WAL journal (readers never block the writer), `synchronous=NORMAL` by
default: a committed step survives the process being killed at any point;
`durable=True` also fsyncs every step, so it survives power loss. Each step
is one `BEGIN IMMEDIATE` transaction holding the compare-and-set on the
thread's head, the record, the new messages and the clearing of pending
writes.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from flowgraph.checkpoint.base import (
    BaseCheckpointer,
    CheckpointRecord,
    PendingWrite,
    chain_from_rows,
    concurrent_run_error,
    kept_after_prune,
)
from flowgraph.errors import DeserializationError

__all__ = ["SQLiteCheckpointer"]

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    thread_id TEXT PRIMARY KEY,
    head TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    parent_id TEXT,
    step INTEGER NOT NULL,
    created_at REAL NOT NULL,
    base_id TEXT NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_id)
);
CREATE INDEX IF NOT EXISTS checkpoints_by_step ON checkpoints (thread_id, step);
CREATE TABLE IF NOT EXISTS messages (
    thread_id TEXT NOT NULL,
    key TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (thread_id, key)
);
CREATE TABLE IF NOT EXISTS pending (
    thread_id TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    task_index INTEGER NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_id, task_index)
);
"""
_COLUMNS = "thread_id, checkpoint_id, parent_id, step, created_at, base_id, payload"
_IN_BATCH = 500
"""Keys per `IN (...)` query, well under SQLite's bound-parameter limit."""
WAL_AUTOCHECKPOINT_PAGES = 1000
"""SQLite's default: copy the WAL into the database once it holds ~4 MB (4 KiB pages)."""
WAL_SIZE_LIMIT = 8 * 1024 * 1024
"""Bytes the -wal file is truncated to after a checkpoint resets it (above the ~4 MB it
reaches between checkpoints, so normal use never pays for re-growing it)."""


def _record(row: tuple[object, ...]) -> CheckpointRecord:
    thread_id, checkpoint_id, parent_id, step, created_at, base_id, payload = row
    if not isinstance(payload, bytes):
        raise DeserializationError(
            f"Checkpoint {checkpoint_id!r} of thread {thread_id!r} has no binary payload; "
            "the row is damaged"
        )
    return CheckpointRecord(
        thread_id=str(thread_id),
        checkpoint_id=str(checkpoint_id),
        parent_id=None if parent_id is None else str(parent_id),
        step=int(step),  # type: ignore[call-overload]  # an INTEGER column
        created_at=float(created_at),  # type: ignore[arg-type]  # a REAL column
        base_id=str(base_id),
        payload=payload,
    )


class SQLiteCheckpointer(BaseCheckpointer):
    """Checkpoints in a SQLite file (created if missing, schema migrated on open)."""

    def __init__(self, path: str | Path, *, durable: bool = False, timeout: float = 30.0) -> None:
        self.path = str(path)
        self.durable = durable
        self.timeout = timeout
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        with self._write() as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise DeserializationError(
                    f"{self.path} was written by a newer flowgraph (schema {version}, this one "
                    f"knows {SCHEMA_VERSION}); upgrade flowgraph to open it"
                )
            if version < SCHEMA_VERSION:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # -- connections ----------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            # one connection per thread; close() may run on another thread
            db = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'NORMAL'}")
            db.execute("PRAGMA foreign_keys=OFF")
            # A burst (a huge step, deleting a long thread) grows the WAL; once the next
            # checkpoint resets it, it is cut back to this size instead of staying large.
            db.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT_PAGES}")
            db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
            self._local.db = db
            with self._lock:
                self._connections.append(db)
        return db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taking the write lock up front (no upgrade deadlocks)."""
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            for db in self._connections:
                db.close()
            self._connections.clear()
        self._local = threading.local()

    # -- writing ------------------------------------------------------------------

    def put(
        self,
        record: CheckpointRecord,
        *,
        expected_head: str | None,
        messages: Mapping[str, bytes],
    ) -> None:
        thread_id = record.thread_id
        now = time.time()
        with self._write() as db:
            if expected_head is None:
                moved = db.execute(
                    "INSERT INTO threads (thread_id, head, updated_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (thread_id) DO NOTHING",
                    (thread_id, record.checkpoint_id, now),
                ).rowcount
            else:
                moved = db.execute(
                    "UPDATE threads SET head = ?, updated_at = ? WHERE thread_id = ? AND head = ?",
                    (record.checkpoint_id, now, thread_id, expected_head),
                ).rowcount
            if moved != 1:
                raise concurrent_run_error(thread_id, expected_head, self.head(thread_id))
            if messages:
                db.executemany(
                    "INSERT OR IGNORE INTO messages (thread_id, key, data) VALUES (?, ?, ?)",
                    [(thread_id, key, data) for key, data in messages.items()],
                )
            db.execute(
                f"INSERT INTO checkpoints ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    thread_id,
                    record.checkpoint_id,
                    record.parent_id,
                    record.step,
                    record.created_at,
                    record.base_id,
                    record.payload,
                ),
            )
            if record.parent_id is not None:
                db.execute(
                    "DELETE FROM pending WHERE thread_id = ? AND checkpoint_id = ?",
                    (thread_id, record.parent_id),
                )

    def put_pending(
        self, thread_id: str, checkpoint_id: str, writes: Sequence[PendingWrite]
    ) -> None:
        with self._write() as db:
            db.executemany(
                "INSERT OR REPLACE INTO pending (thread_id, checkpoint_id, task_index, payload) "
                "VALUES (?, ?, ?, ?)",
                [(thread_id, checkpoint_id, w.task_index, w.payload) for w in writes],
            )

    # -- reading ------------------------------------------------------------------

    def head(self, thread_id: str) -> str | None:
        row = (
            self._db()
            .execute("SELECT head FROM threads WHERE thread_id = ?", (thread_id,))
            .fetchone()
        )
        return None if row is None else str(row[0])

    def get(self, thread_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        row = (
            self._db()
            .execute(
                f"SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?",
                (thread_id, checkpoint_id),
            )
            .fetchone()
        )
        return None if row is None else _record(row)

    def chain(self, thread_id: str, checkpoint_id: str) -> list[CheckpointRecord]:
        # Steps, not ids, bound the range: ids are time-ordered only as far as clocks agree.
        rows = (
            self._db()
            .execute(
                f"SELECT {_COLUMNS} FROM checkpoints AS c WHERE c.thread_id = ?1 "
                "AND c.step BETWEEN (SELECT b.step FROM checkpoints AS t JOIN checkpoints AS b "
                "ON b.thread_id = t.thread_id AND b.checkpoint_id = t.base_id "
                "WHERE t.thread_id = ?1 AND t.checkpoint_id = ?2) "
                "AND (SELECT step FROM checkpoints WHERE thread_id = ?1 AND checkpoint_id = ?2)",
                (thread_id, checkpoint_id),
            )
            .fetchall()
        )
        return chain_from_rows(map(_record, rows), checkpoint_id, thread_id)

    def messages(self, thread_id: str, keys: Iterable[str]) -> dict[str, bytes]:
        wanted = list(keys)
        db = self._db()
        found: dict[str, bytes] = {}
        for start in range(0, len(wanted), _IN_BATCH):
            batch = wanted[start : start + _IN_BATCH]
            marks = ", ".join("?" * len(batch))
            found.update(
                db.execute(
                    f"SELECT key, data FROM messages WHERE thread_id = ? AND key IN ({marks})",
                    (thread_id, *batch),
                ).fetchall()
            )
        return found

    def pending(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        rows = (
            self._db()
            .execute(
                "SELECT task_index, payload FROM pending WHERE thread_id = ? AND checkpoint_id = ? "
                "ORDER BY task_index",
                (thread_id, checkpoint_id),
            )
            .fetchall()
        )
        if any(not isinstance(p, bytes) for _, p in rows):
            raise DeserializationError(
                f"A pending write of checkpoint {checkpoint_id!r} of thread {thread_id!r} has "
                "no binary payload; the row is damaged"
            )
        return [PendingWrite(task_index=int(i), payload=p) for i, p in rows]

    def history(
        self, thread_id: str, *, limit: int | None = None, before: str | None = None
    ) -> list[CheckpointRecord]:
        query = f"SELECT {_COLUMNS} FROM checkpoints WHERE thread_id = ?"
        params: list[object] = [thread_id]
        if before is not None:
            query += " AND checkpoint_id < ?"
            params.append(before)
        query += " ORDER BY checkpoint_id DESC"
        if limit is not None:
            query += " LIMIT ?"
            params.append(limit)
        return [_record(row) for row in self._db().execute(query, params).fetchall()]

    def threads(self) -> list[str]:
        rows = self._db().execute("SELECT thread_id FROM threads ORDER BY thread_id").fetchall()
        return [str(r[0]) for r in rows]

    # -- housekeeping -------------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        with self._write() as db:
            for table in ("threads", "checkpoints", "messages", "pending"):
                db.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))

    def prune(self, thread_id: str, keep_last: int) -> int:
        with self._write() as db:
            row = db.execute(
                "SELECT head FROM threads WHERE thread_id = ?", (thread_id,)
            ).fetchone()
            if row is None:
                return 0
            rows = db.execute(
                "SELECT checkpoint_id, parent_id, base_id FROM checkpoints WHERE thread_id = ?",
                (thread_id,),
            ).fetchall()
            keep = kept_after_prune(rows, row[0], keep_last)
            dropped = [(thread_id, cid) for cid, _, _ in rows if cid not in keep]
            db.executemany(
                "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?", dropped
            )
            db.executemany("DELETE FROM pending WHERE thread_id = ? AND checkpoint_id = ?", dropped)
        return len(dropped)

    def forget_messages(self, thread_id: str, keep: set[str]) -> int:
        with self._write() as db:
            stored = db.execute(
                "SELECT key FROM messages WHERE thread_id = ?", (thread_id,)
            ).fetchall()
            gone = [(thread_id, key) for (key,) in stored if key not in keep]
            db.executemany("DELETE FROM messages WHERE thread_id = ? AND key = ?", gone)
        return len(gone)

    def compact(self) -> None:
        db = self._db()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # VACUUM wrote the new file into the WAL
