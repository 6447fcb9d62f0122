"""SQLiteCheckpointer: the embedded default, one file, safe for many threads and processes.

WAL journal (readers never block the writer), `synchronous=NORMAL` by
default: a committed step survives the process being killed at any point;
`durable=True` also fsyncs every step, so it survives power loss. Each step
is one `BEGIN IMMEDIATE` transaction holding the compare-and-set on the
thread's head, the record, the new messages and the clearing of pending
writes.

A thread's head is not rewritten by each step: it is the thread's newest
checkpoint id (ids sort by creation time), unless a checkpoint was stored
whose id sorts before that one (a process whose clock is behind), which
`threads.head` then names until a later id sorts last again. A step thus
reads its thread's row and newest id (one query, which also says whether
pending writes wait to be cleared) and writes no `threads` page.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from flowgraph.checkpoint._sqlite import ThreadConnections, setup_pragma
from flowgraph.checkpoint.base import (
    BaseCheckpointer,
    CheckpointRecord,
    PendingWrite,
    ThreadLease,
    chain_from_rows,
    concurrent_run_error,
    kept_after_prune,
)
from flowgraph.errors import DeserializationError

__all__ = ["SQLiteCheckpointer"]

SCHEMA_VERSION = 4
_TABLES = {
    "threads": """
        thread_id TEXT PRIMARY KEY,
        head TEXT""",
    "checkpoints": """
        thread_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        parent_id TEXT,
        step INTEGER NOT NULL,
        created_at REAL NOT NULL,
        base_id TEXT NOT NULL,
        payload BLOB NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_id)""",
    "messages": """
        thread_id TEXT NOT NULL,
        key TEXT NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (thread_id, key)""",
    "pending": """
        thread_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        task_index INTEGER NOT NULL,
        payload BLOB NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_id, task_index)""",
    "leases": """
        thread_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        owner TEXT NOT NULL,
        expires_at REAL NOT NULL""",
}
"""Schema 3: a step appends as few bytes to the WAL as it can. Each WAL page is
written twice (at commit, then by the next WAL checkpoint, whose copy and fsync
were ~70% of commit time), so the storage cost of a step follows the pages it
touches, not the ~1 KB it stores. No index on steps (`chain` walks parent
links); threads, messages and pending clustered on their primary keys (one
b-tree each, not a rowid table plus a key index). Checkpoints stay a rowid table:
appended in rowid order its pages fill up, where a clustered one splits mid-tree
and spills payloads of a few hundred bytes to overflow pages. A thread's row is
written when it is created, not by every step: `head` is NULL while the newest
checkpoint id is the head (schema 2 rewrote the row, one more page, each step).
Schema 4 adds `leases`: the run that holds each busy thread (no row: idle)."""
_CLUSTERED = frozenset({"threads", "messages", "pending", "leases"})
PAGE_SIZE = 2048
"""For new files (an existing file keeps its own). Per ReAct step, in WAL bytes and
file growth: 4 KiB pages ~25 KB and ~970 B, 2 KiB ~15 KB and ~1,060 B, 1 KiB ~9 KB
but ~1,100 B (a checkpoint row of ~700 B then fills a page alone)."""
_COLUMNS = "thread_id, checkpoint_id, parent_id, step, created_at, base_id, payload"
_PREFIXED = ", ".join(f"c.{name}" for name in _COLUMNS.split(", "))
_IN_BATCH = 500
"""Keys per `IN (...)` query, well under SQLite's bound-parameter limit."""
WAL_AUTOCHECKPOINT_BYTES = 4 * 1024 * 1024
"""Copy the WAL into the database once it holds ~4 MB (SQLite's 1,000 pages of 4 KiB; with
2 KiB pages, 2,000 of them: a step's share of each copy and fsync was ~7% smaller than
at 1,000, and ~equal at 4,000)."""
WAL_SIZE_LIMIT = 8 * 1024 * 1024
"""Bytes the -wal file is truncated to after a checkpoint resets it (above the ~4 MB it
reaches between checkpoints, so normal use never pays for re-growing it)."""


def _record(row: tuple[object, ...]) -> CheckpointRecord:
    """A checkpoint row as a record; a row whose columns have the wrong types (written
    behind the store's back, or damaged) is a DeserializationError naming it."""
    thread_id, checkpoint_id, parent_id, step, created_at, base_id, payload = row
    if not isinstance(payload, bytes):
        raise _damaged(thread_id, checkpoint_id, "has no binary payload")
    if type(step) is not int:
        raise _damaged(thread_id, checkpoint_id, f"has step {step!r}, not an integer")
    if not isinstance(created_at, (float, int)):
        raise _damaged(thread_id, checkpoint_id, f"has created_at {created_at!r}, not a number")
    return CheckpointRecord(
        thread_id=str(thread_id),
        checkpoint_id=str(checkpoint_id),
        parent_id=None if parent_id is None else str(parent_id),
        step=step,
        created_at=float(created_at),
        base_id=str(base_id),
        payload=payload,
    )


def _damaged(thread_id: object, checkpoint_id: object, problem: str) -> DeserializationError:
    return DeserializationError(
        f"Checkpoint {checkpoint_id!r} of thread {thread_id!r} {problem}; the row is damaged "
        "(restore the file from a backup, or delete_thread() to drop the thread)"
    )


_NEWEST = "(SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ?1)"
"""The thread's newest checkpoint id (`?1` its id): one seek in the key index."""
_HEAD = f"coalesce(head, {_NEWEST})"
"""A thread's head, in a query over its `threads` row."""
_TAKE = (
    "INSERT INTO leases (thread_id, run_id, owner, expires_at) VALUES (?1, ?2, ?3, ?4) "
    "ON CONFLICT (thread_id) DO UPDATE SET run_id = ?2, owner = ?3, expires_at = ?4 "
    "WHERE leases.expires_at <= ?5 OR (leases.run_id = ?6 AND leases.owner = ?7)"
)
"""Take a thread's lease (`?1`) for run `?2` of owner `?3` until `?4`: free, expired at `?5`,
or held by the dead run `?6` of `?7` (a takeover; NULL for none)."""
_HOLDER = "SELECT run_id, owner, expires_at FROM leases WHERE thread_id = ?"
_HEAD_AND_PENDING = (
    f"SELECT h.head, p.task_index, p.payload FROM (SELECT {_HEAD} AS head FROM threads "
    "WHERE thread_id = ?1) AS h LEFT JOIN pending AS p "
    "ON p.thread_id = ?1 AND p.checkpoint_id = h.head ORDER BY p.task_index"
)
"""A thread's head and the pending writes against it (a row each; one row of NULLs: none)."""
_PUT_MESSAGE = "INSERT OR IGNORE INTO messages (thread_id, key, data) VALUES (?, ?, ?)"
_PUT_PENDING = (
    "INSERT OR REPLACE INTO pending (thread_id, checkpoint_id, task_index, payload) "
    "VALUES (?, ?, ?, ?)"
)
_RELEASE = "DELETE FROM leases WHERE thread_id = ? AND run_id = ? AND owner = ?"
_HEADS = (
    f"SELECT head, {_NEWEST}, EXISTS (SELECT 1 FROM pending WHERE thread_id = ?1 "
    "AND checkpoint_id = ?2) FROM threads WHERE thread_id = ?1"
)
"""What `put` checks (`?2` the parent): the head the thread's row names (NULL: none), its
newest id, and whether pending writes against the parent wait to be cleared (rarely:
a statement that usually deletes nothing is not run)."""


def _upgrade(db: sqlite3.Connection, version: int) -> None:
    """Create the tables of a new file, or bring an older file's to schema 4, data kept.

    Runs in the opener's write transaction, so a crash leaves the old schema
    whole and two processes opening one old file migrate it once.
    """
    # schema 1: each table a rowid b-tree plus its primary-key index, and an index on
    # (thread_id, step); schema 2: threads(thread_id, head NOT NULL, updated_at), the
    # head rewritten by each step; schema 3 had no leases table (created below). The
    # other tables' columns never changed.
    rebuilt = (
        ["threads", "checkpoints", "messages", "pending"]
        if version == 1
        else ["threads"]
        if version == 2
        else []
    )
    for table in rebuilt:
        db.execute(f"ALTER TABLE {table} RENAME TO {table}_v{version}")
    for table, columns in _TABLES.items():
        rowid = " WITHOUT ROWID" if table in _CLUSTERED else ""
        db.execute(f"CREATE TABLE IF NOT EXISTS {table} ({columns}\n){rowid}")
    for table in rebuilt:
        names = ", ".join(row[1] for row in db.execute(f"PRAGMA table_info({table})"))
        db.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {table}_v{version}")
        db.execute(f"DROP TABLE {table}_v{version}")
    if rebuilt:
        # a head that is its thread's newest id needs no row of its own any more
        db.execute(
            "UPDATE threads SET head = NULL WHERE head = (SELECT max(checkpoint_id) "
            "FROM checkpoints AS c WHERE c.thread_id = threads.thread_id)"
        )
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _head(db: sqlite3.Connection, thread_id: str) -> str | None:
    row = db.execute(f"SELECT {_HEAD} FROM threads WHERE thread_id = ?1", (thread_id,)).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def _pending_writes(
    rows: Iterable[tuple[Any, Any]], thread_id: str, checkpoint_id: str
) -> list[PendingWrite]:
    writes = []
    for index, payload in rows:
        if not isinstance(payload, bytes):
            raise DeserializationError(
                f"A pending write of checkpoint {checkpoint_id!r} of thread {thread_id!r} has "
                "no binary payload; the row is damaged"
            )
        writes.append(PendingWrite(task_index=int(index), payload=payload))
    return writes


def _put(
    db: sqlite3.Connection,
    record: CheckpointRecord,
    expected_head: str | None,
    messages: Mapping[str, bytes],
) -> None:
    """A step's writes, in the caller's transaction: compare-and-set on the head, the
    record, its new messages, and clearing the parent's pending writes."""
    thread_id = record.thread_id
    checkpoint_id = record.checkpoint_id
    parent_id = record.parent_id
    if expected_head is None:
        created = db.execute(
            "INSERT INTO threads (thread_id, head) VALUES (?, NULL) "
            "ON CONFLICT (thread_id) DO NOTHING",
            (thread_id,),
        ).rowcount
        if created != 1:
            raise concurrent_run_error(thread_id, None, _head(db, thread_id))
        pending = parent_id is not None
    else:
        found = db.execute(_HEADS, (thread_id, parent_id)).fetchone()
        if found is None:
            raise concurrent_run_error(thread_id, expected_head, None)
        named, newest, pending = found
        if (newest if named is None else named) != expected_head:
            raise concurrent_run_error(thread_id, expected_head, named or newest)
        last = newest is None or checkpoint_id > newest
        if named is not None or not last:
            # NULL once this id sorts last; else the row names it (a slower clock's id)
            db.execute(
                "UPDATE threads SET head = ? WHERE thread_id = ?",
                (None if last else checkpoint_id, thread_id),
            )
    db.execute(
        f"INSERT INTO checkpoints ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            thread_id,
            checkpoint_id,
            parent_id,
            record.step,
            record.created_at,
            record.base_id,
            record.payload,
        ),
    )
    if len(messages) == 1:  # a step's usual one new message: no list for executemany
        ((key, data),) = messages.items()
        db.execute(_PUT_MESSAGE, (thread_id, key, data))
    elif messages:
        db.executemany(_PUT_MESSAGE, [(thread_id, key, data) for key, data in messages.items()])
    if pending:
        db.execute(
            "DELETE FROM pending WHERE thread_id = ? AND checkpoint_id = ?",
            (thread_id, parent_id),
        )


class _Transaction:
    """`with`: BEGIN IMMEDIATE, then COMMIT, or ROLLBACK if the block raised.

    A class rather than a generator: every step opens one, and a generator's
    context manager costs a StopIteration on each exit.
    """

    __slots__ = ("db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


class SQLiteCheckpointer(BaseCheckpointer):
    """Checkpoints in a SQLite file (created if missing, schema migrated on open)."""

    def __init__(
        self,
        path: str | Path,
        *,
        durable: bool = False,
        timeout: float = 30.0,
        lease_s: float | None = None,
    ) -> None:
        self.path = str(path)
        if lease_s is not None:
            self.lease_s = lease_s
        self.durable = durable
        self.timeout = timeout
        self._connections = ThreadConnections(self.path, timeout, self._setup)
        self._db = self._connections.get
        """This thread's connection (one per thread; close() may run on another thread)."""
        with self._write() as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise DeserializationError(
                    f"{self.path} was written by a newer flowgraph (schema {version}, this one "
                    f"knows {SCHEMA_VERSION}); upgrade flowgraph to open it"
                )
            if version < SCHEMA_VERSION:
                _upgrade(db, version)

    # -- connections ----------------------------------------------------------------

    def _setup(self, db: sqlite3.Connection) -> None:
        # only a file not created yet takes it; WAL mode creates the file
        setup_pragma(db, f"PRAGMA page_size={PAGE_SIZE}", self.timeout)
        setup_pragma(db, "PRAGMA journal_mode=WAL", self.timeout)
        db.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'NORMAL'}")
        db.execute("PRAGMA foreign_keys=OFF")
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        db.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT_BYTES // page_size}")
        # A burst (a huge step, deleting a long thread) grows the WAL; once the next
        # checkpoint resets it, it is cut back to this size instead of staying large.
        db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")

    def _write(self) -> _Transaction:
        """One write transaction, taking the write lock up front (no upgrade deadlocks)."""
        return _Transaction(self._db())

    def close(self) -> None:
        """Close every connection, whichever thread opened it.

        The last one to close copies the WAL into the database file and
        removes the -wal and -shm files, so the file alone is the store. A
        later call opens new connections, as the other backends do.
        """
        self._connections.close()

    # -- writing ------------------------------------------------------------------

    def put(
        self,
        record: CheckpointRecord,
        *,
        expected_head: str | None,
        messages: Mapping[str, bytes],
    ) -> None:
        with self._write() as db:
            _put(db, record, expected_head, messages)

    def _put_and_acquire(
        self,
        record: CheckpointRecord,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        run_id: str,
        owner: str,
        lease_s: float,
    ) -> ThreadLease | None:
        thread_id = record.thread_id
        now = time.time()
        with self._write() as db:  # a held thread: nothing was written, nothing commits
            taken = db.execute(_TAKE, (thread_id, run_id, owner, now + lease_s, now, None, None))
            if not taken.rowcount:
                row = db.execute(_HOLDER, (thread_id,)).fetchone()
                return ThreadLease(
                    thread_id=thread_id, run_id=row[0], owner=row[1], expires_at=row[2]
                )
            _put(db, record, expected_head, messages)
        return None

    def _put_and_release(
        self,
        record: CheckpointRecord,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        run_id: str,
        owner: str,
    ) -> bool:
        with self._write() as db:
            _put(db, record, expected_head, messages)
            db.execute(_RELEASE, (record.thread_id, run_id, owner))
        return True

    def put_pending(
        self, thread_id: str, checkpoint_id: str, writes: Sequence[PendingWrite]
    ) -> None:
        rows = [(thread_id, checkpoint_id, w.task_index, w.payload) for w in writes]
        if len(rows) == 1:  # a `once` result, as it returns: one statement is a transaction
            self._db().execute(_PUT_PENDING, rows[0])
            return
        with self._write() as db:
            db.executemany(_PUT_PENDING, rows)

    # -- leases (the machine's wall clock: every process on one file shares it) ------

    def acquire_lease(
        self,
        thread_id: str,
        run_id: str,
        owner: str,
        lease_s: float,
        *,
        takeover: ThreadLease | None = None,
    ) -> ThreadLease | None:
        now = time.time()
        dead = (takeover.run_id, takeover.owner) if takeover is not None else (None, None)
        with self._write() as db:
            taken = db.execute(_TAKE, (thread_id, run_id, owner, now + lease_s, now, *dead))
            if taken.rowcount:
                return None
            row = db.execute(_HOLDER, (thread_id,)).fetchone()
        return ThreadLease(thread_id=thread_id, run_id=row[0], owner=row[1], expires_at=row[2])

    def renew_lease(self, thread_id: str, run_id: str, owner: str, lease_s: float) -> bool:
        with self._write() as db:
            return bool(
                db.execute(
                    "UPDATE leases SET expires_at = ? "
                    "WHERE thread_id = ? AND run_id = ? AND owner = ?",
                    (time.time() + lease_s, thread_id, run_id, owner),
                ).rowcount
            )

    def release_lease(self, thread_id: str, run_id: str, owner: str) -> None:
        with self._write() as db:
            db.execute(_RELEASE, (thread_id, run_id, owner))

    def read_lease(self, thread_id: str) -> ThreadLease | None:
        row = (
            self._db()
            .execute(
                "SELECT run_id, owner, expires_at FROM leases "
                "WHERE thread_id = ? AND expires_at > ?",
                (thread_id, time.time()),
            )
            .fetchone()
        )
        if row is None:
            return None
        return ThreadLease(thread_id=thread_id, run_id=row[0], owner=row[1], expires_at=row[2])

    # -- reading ------------------------------------------------------------------

    def head(self, thread_id: str) -> str | None:
        return _head(self._db(), thread_id)

    def head_and_pending(self, thread_id: str) -> tuple[str | None, list[PendingWrite]]:
        rows = self._db().execute(_HEAD_AND_PENDING, (thread_id,)).fetchall()
        if not rows:
            return None, []
        head = rows[0][0]
        if head is None:
            return None, []
        writes = [(i, p) for _, i, p in rows if i is not None]
        return str(head), _pending_writes(writes, thread_id, str(head))

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
        # Parent links, not steps or ids, lead back to the base: each hop is one primary-key
        # lookup, and a branch beside this one is never read. UNION (not ALL) ends a cycle.
        rows = (
            self._db()
            .execute(
                f"WITH RECURSIVE walk({_COLUMNS}, stop) AS ("
                f"SELECT {_COLUMNS}, base_id FROM checkpoints "
                "WHERE thread_id = ?1 AND checkpoint_id = ?2 "
                f"UNION SELECT {_PREFIXED}, w.stop FROM walk AS w JOIN checkpoints AS c "
                "ON c.thread_id = ?1 AND c.checkpoint_id = w.parent_id "
                f"WHERE w.checkpoint_id != w.stop) SELECT {_COLUMNS} FROM walk",
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
        return _pending_writes(rows, thread_id, checkpoint_id)

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
                f"SELECT {_HEAD} FROM threads WHERE thread_id = ?1", (thread_id,)
            ).fetchone()
            if row is None or row[0] is None:
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
