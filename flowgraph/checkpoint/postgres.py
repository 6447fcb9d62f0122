"""PostgresCheckpointer: checkpoints in PostgreSQL, for many processes on many hosts.

The same storage design as SQLite: opaque records, a per-thread message log
keyed by id (a message is stored once), pending writes, and a head per
thread. A step is written by ONE statement whose data-modifying CTEs move
the head (the compare-and-set), insert the record and the new messages, and
clear the parent's pending writes, so it is one transaction and one round
trip; a stale head moves nothing and so stores nothing. A run's first write
takes the thread's lease in the same statement, and its last gives it back.

Why sync, with the async twins in a worker thread (the BaseCheckpointer
default) rather than psycopg's async pool: psycopg's sync and async APIs
are two classes, so native async would mean a second copy of every method
(STYLE: one logic). A put is one network round trip plus a server commit;
the hop to a worker thread is a small fixed cost beside it, and the pool
already lets many worker threads (so many event-loop tasks) write at once.

Schema: versioned migrations (`MIGRATIONS`) in a `flowgraph_schema_version`
table, applied by `setup()` or on first use, under an advisory lock, so
several processes starting at once migrate exactly once.
A schema written by a newer flowgraph is refused.

Connections: a psycopg_pool pool, opened on first use in each process. A
forked child sees the pid change and opens its own pool (a parent's sockets
are never used, nor closed, by the child). A connection that died (server
restart, `pg_terminate_backend`, a firewall's idle timeout) costs a failed
attempt, not a failed call: the call is retried on another connection.
That is safe because every write is idempotent or guarded by the
compare-and-set; a put retried after its first attempt had committed finds
its own record at the head and succeeds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from typing import Any, TypeVar

from flowgraph.checkpoint._postgres_sql import MIGRATIONS, SCHEMA_VERSION, TABLES, Statements
from flowgraph.checkpoint.base import (
    BaseCheckpointer,
    CheckpointRecord,
    PendingWrite,
    ThreadLease,
    chain_from_rows,
    concurrent_run_error,
    kept_after_prune,
)

try:
    from flowgraph.checkpoint._pg import (
        Conn,
        ProcessPool,
        apply_migrations,
        check_schema_name,
        migrate,
    )
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "PostgresCheckpointer needs psycopg 3 and psycopg_pool: pip install 'flowgraph[postgres]'"
    ) from exc

__all__ = ["SCHEMA_VERSION", "PostgresCheckpointer"]

_T = TypeVar("_T")


def _step_params(
    record: CheckpointRecord, expected_head: str | None, messages: Mapping[str, bytes]
) -> dict[str, Any]:
    """The parameters of a step's statement (`put_new`, `put_next` and their variants)."""
    return {
        "thread": record.thread_id,
        "id": record.checkpoint_id,
        "expected": expected_head,
        "now": time.time(),
        "parent": record.parent_id,
        "step": record.step,
        "created": record.created_at,
        "base": record.base_id,
        "payload": record.payload,
        "keys": list(messages),
        "datas": list(messages.values()),
    }


def _record(row: tuple[Any, ...]) -> CheckpointRecord:
    thread_id, checkpoint_id, parent_id, step, created_at, base_id, payload = row
    return CheckpointRecord(
        thread_id=thread_id,
        checkpoint_id=checkpoint_id,
        parent_id=parent_id,
        step=step,
        created_at=created_at,
        base_id=base_id,
        payload=bytes(payload),
    )


class PostgresCheckpointer(BaseCheckpointer):
    """Checkpoints in PostgreSQL tables `flowgraph_*` of one schema, through a connection pool.

    `dsn` is a libpq connection string or URL
    (`postgresql://user:password@host:5432/dbname`). `schema` (default
    `public`) is created if missing, so one database can hold several
    independent stores. The pool opens `min_size` connections up front and
    grows to `max_size`; a call waits up to `timeout` seconds for a free
    connection before failing with `psycopg_pool.PoolTimeout`.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "public",
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
        lease_s: float | None = None,
    ) -> None:
        check_schema_name(schema)
        self.dsn = dsn
        if lease_s is not None:
            self.lease_s = lease_s
        self.schema = schema
        self._pool = ProcessPool(
            dsn,
            name=f"flowgraph-{schema}",
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            prepare=self.setup,
        )
        self._sql = Statements(f'"{schema}"')

    # -- schema ---------------------------------------------------------------------

    def setup(self) -> None:
        """Create or upgrade the tables now (otherwise done on first use); idempotent.

        Safe when several processes call it at once: an advisory lock lets
        one migrate while the others wait, then find the work done.
        """
        migrate(
            self.dsn,
            self.schema,
            table="flowgraph_schema_version",
            migrations=MIGRATIONS,
            what="checkpoints",
            lock=f"flowgraph:{self.schema}",
        )
        self._pool.prepared = True

    def _migrate(self, conn: Conn, version: int, target: int = SCHEMA_VERSION) -> None:
        """Apply migrations `version + 1 .. target` inside the caller's transaction."""
        table = "flowgraph_schema_version"
        apply_migrations(conn, self.schema, table, MIGRATIONS, version, target)

    # -- connections ----------------------------------------------------------------

    @property
    def min_size(self) -> int:
        return self._pool.min_size

    @property
    def max_size(self) -> int:
        return self._pool.max_size

    @property
    def timeout(self) -> float:
        return self._pool.timeout

    def _run(self, work: Callable[[Conn], _T]) -> _T:
        return self._pool.run(work)

    def close(self) -> None:
        self._pool.close()

    # -- writing ------------------------------------------------------------------

    def put(
        self,
        record: CheckpointRecord,
        *,
        expected_head: str | None,
        messages: Mapping[str, bytes],
    ) -> None:
        self._put(record, expected_head, messages, None)

    def _put_and_release(
        self,
        record: CheckpointRecord,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        run_id: str,
        owner: str,
    ) -> bool:
        if expected_head is None:  # a new thread's first write, not a run's last
            self._put(record, None, messages, None)
            return False
        self._put(record, expected_head, messages, (run_id, owner))
        return True

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
        params = _step_params(record, expected_head, messages)
        params.update(run=run_id, owner=owner, lease=lease_s)
        query = self._sql.put_new_acquire if expected_head is None else self._sql.put_next_acquire
        while True:
            row = self._run(lambda conn: conn.execute(query, params).fetchone())
            assert row is not None  # the counts are always there
            taken, moved, holder, holder_owner, expires_at = row
            if moved:
                return None
            if taken:
                break
            if holder is not None:
                return ThreadLease(
                    thread_id=thread_id,
                    run_id=str(holder),
                    owner=str(holder_owner),
                    expires_at=float(expires_at),
                )
            # the holder committed after this statement's snapshot was taken: ask again
        found = self.head(thread_id)
        if found == record.checkpoint_id:
            return None  # a retry after a lost connection: the first attempt had committed
        # the lease came without the step (rare: the head moved as the statement ran)
        with suppress(Exception):
            self.release_lease(thread_id, run_id, owner)
        raise concurrent_run_error(thread_id, expected_head, found)

    def _put(
        self,
        record: CheckpointRecord,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        release: tuple[str, str] | None,
    ) -> None:
        """One statement: the step, and (`release`: run id, owner) the lease given back."""
        thread_id = record.thread_id
        params = _step_params(record, expected_head, messages)
        if release is not None:
            params["run"], params["owner"] = release
        query = (
            self._sql.put_new
            if expected_head is None
            else self._sql.put_next
            if release is None
            else self._sql.put_next_release
        )

        def write(conn: Conn) -> bool:
            row = conn.execute(query, params).fetchone()
            return row is not None and row[0] == 1

        if self._run(write):
            return
        found = self.head(thread_id)
        if found == record.checkpoint_id:
            return  # a retry after a lost connection: the first attempt had committed
        raise concurrent_run_error(thread_id, expected_head, found)

    def put_pending(
        self, thread_id: str, checkpoint_id: str, writes: Sequence[PendingWrite]
    ) -> None:
        latest = {w.task_index: w.payload for w in writes}  # one row per task, the last wins
        if not latest:
            return
        params = (thread_id, checkpoint_id, list(latest), list(latest.values()))
        self._run(lambda conn: conn.execute(self._sql.put_pending, params))

    # -- leases (expiry by the server's clock, so hosts' clocks need not agree) -------

    def acquire_lease(
        self,
        thread_id: str,
        run_id: str,
        owner: str,
        lease_s: float,
        *,
        takeover: ThreadLease | None = None,
    ) -> ThreadLease | None:
        params = {
            "thread": thread_id,
            "run": run_id,
            "owner": owner,
            "lease": lease_s,
            "dead_run": takeover.run_id if takeover is not None else None,
            "dead_owner": takeover.owner if takeover is not None else None,
        }
        while True:
            row = self._run(lambda conn: conn.execute(self._sql.acquire_lease, params).fetchone())
            assert row is not None  # the count is always there
            taken, holder, holder_owner, expires_at = row
            if taken:
                return None
            if holder is not None:
                return ThreadLease(
                    thread_id=thread_id,
                    run_id=str(holder),
                    owner=str(holder_owner),
                    expires_at=float(expires_at),
                )
            # the holder committed after this statement's snapshot was taken: ask again

    def renew_lease(self, thread_id: str, run_id: str, owner: str, lease_s: float) -> bool:
        params = {"thread": thread_id, "run": run_id, "owner": owner, "lease": lease_s}
        return bool(self._run(lambda conn: conn.execute(self._sql.renew_lease, params).rowcount))

    def release_lease(self, thread_id: str, run_id: str, owner: str) -> None:
        params = (thread_id, run_id, owner)
        self._run(lambda conn: conn.execute(self._sql.release_lease, params))

    def read_lease(self, thread_id: str) -> ThreadLease | None:
        row = self._run(lambda conn: conn.execute(self._sql.read_lease, (thread_id,)).fetchone())
        if row is None:
            return None
        return ThreadLease(
            thread_id=thread_id, run_id=str(row[0]), owner=str(row[1]), expires_at=float(row[2])
        )

    # -- reading ------------------------------------------------------------------

    def head(self, thread_id: str) -> str | None:
        row = self._run(lambda conn: conn.execute(self._sql.head, (thread_id,)).fetchone())
        return None if row is None else str(row[0])

    def get(self, thread_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        row = self._run(
            lambda conn: conn.execute(
                self._sql.get, (thread_id, checkpoint_id), binary=True
            ).fetchone()
        )
        return None if row is None else _record(row)

    def chain(self, thread_id: str, checkpoint_id: str) -> list[CheckpointRecord]:
        # Steps, not ids, bound the range: ids are time-ordered only as far as clocks agree.
        rows = self._run(
            lambda conn: conn.execute(
                self._sql.chain, {"thread": thread_id, "id": checkpoint_id}, binary=True
            ).fetchall()
        )
        return chain_from_rows(map(_record, rows), checkpoint_id, thread_id)

    def messages(self, thread_id: str, keys: Iterable[str]) -> dict[str, bytes]:
        wanted = list(keys)
        if not wanted:
            return {}
        rows = self._run(
            lambda conn: conn.execute(
                self._sql.messages, (thread_id, wanted), binary=True
            ).fetchall()
        )
        return {str(key): bytes(data) for key, data in rows}

    def head_and_pending(self, thread_id: str) -> tuple[str | None, list[PendingWrite]]:
        rows = self._run(
            lambda conn: conn.execute(
                self._sql.head_and_pending, (thread_id,), binary=True
            ).fetchall()
        )
        if not rows or rows[0][0] is None:
            return None, []
        writes = [
            PendingWrite(task_index=int(i), payload=bytes(p)) for _, i, p in rows if i is not None
        ]
        return str(rows[0][0]), writes

    def pending(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        rows = self._run(
            lambda conn: conn.execute(
                self._sql.pending, (thread_id, checkpoint_id), binary=True
            ).fetchall()
        )
        return [PendingWrite(task_index=int(i), payload=bytes(p)) for i, p in rows]

    def history(
        self, thread_id: str, *, limit: int | None = None, before: str | None = None
    ) -> list[CheckpointRecord]:
        params = {"thread": thread_id, "before": before, "limit": limit}
        rows = self._run(
            lambda conn: conn.execute(self._sql.history, params, binary=True).fetchall()
        )
        return [_record(row) for row in rows]

    def threads(self) -> list[str]:
        rows = self._run(lambda conn: conn.execute(self._sql.threads).fetchall())
        return [str(row[0]) for row in rows]

    # -- housekeeping -------------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        def work(conn: Conn) -> None:
            with conn.transaction():
                # the thread's row first, as put and prune lock it: no deadlock with them
                conn.execute(self._sql.delete_head, (thread_id,))
                conn.execute(self._sql.delete_thread, {"thread": thread_id})

        self._run(work)

    def prune(self, thread_id: str, keep_last: int) -> int:
        def work(conn: Conn) -> int:
            with conn.transaction():
                # lock the thread's row: a put waits, so the head cannot move meanwhile
                row = conn.execute(self._sql.head_for_update, (thread_id,)).fetchone()
                if row is None:
                    return 0
                rows = conn.execute(self._sql.lineage, (thread_id,)).fetchall()
                keep = kept_after_prune(rows, row[0], keep_last)
                dropped = [cid for cid, _, _ in rows if cid not in keep]
                if dropped:
                    conn.execute(self._sql.drop_checkpoints, {"thread": thread_id, "ids": dropped})
            return len(dropped)

        return self._run(work)

    def forget_messages(self, thread_id: str, keep: set[str]) -> int:
        return self._run(
            lambda conn: conn.execute(self._sql.forget_messages, (thread_id, list(keep))).rowcount
        )

    def compact(self) -> None:
        """Rewrite the tables (VACUUM FULL) so pruned space goes back to the file system.

        It locks each table while rewriting it, so writers wait: run it in a
        quiet moment. Without it, autovacuum already makes freed space
        reusable for new checkpoints; the files just do not shrink.
        """

        def work(conn: Conn) -> None:
            for table in TABLES:
                conn.execute(f'VACUUM (FULL, ANALYZE) "{self.schema}".flowgraph_{table}')

        self._run(work)
