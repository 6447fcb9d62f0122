"""What every PostgreSQL-backed class shares: a pool per process, retried calls, migrations.

`PostgresCheckpointer` and `PostgresStore` (and anything else that keeps
tables in a schema) use these, so a fork, a dead connection or two
processes migrating at once are handled in one place.

- `ProcessPool`: a psycopg_pool pool opened on first use in each process.
  A forked child opens its own (the parent's sockets are never used, nor
  closed, by the child), and a lock another thread held at fork time is
  replaced in the child. A call that meets a dead connection (a restart, a
  killed backend, an idle timeout) is retried on another one: every caller's
  statements are idempotent or guarded, so that is safe.
- `migrate`: versioned migrations in a version table of the schema, applied
  under an advisory lock so that processes starting together migrate once;
  a schema written by a newer flowgraph is refused.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from flowgraph.errors import DeserializationError

try:
    import psycopg
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "PostgreSQL needs psycopg 3 and psycopg_pool: pip install 'flowgraph[postgres]'"
    ) from exc

__all__ = ["Conn", "ProcessPool", "check_schema_name", "migrate", "stored_version"]

T = TypeVar("T")
Conn = psycopg.Connection[tuple[Any, ...]]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_live: weakref.WeakSet[ProcessPool] = weakref.WeakSet()
_inherited: list[object] = []
"""Pools a forked child inherited from its parent: left alone until the child exits."""


def check_schema_name(schema: str) -> None:
    if not _IDENTIFIER.fullmatch(schema):
        raise ValueError(
            f"Schema name {schema!r} is not a plain identifier; use letters, digits and "
            "underscores (at most 63, not starting with a digit)"
        )


class ProcessPool:
    """This process's connection pool to `dsn`; `prepare()` runs once before it first opens."""

    def __init__(
        self,
        dsn: str,
        *,
        name: str,
        min_size: int,
        max_size: int,
        timeout: float,
        prepare: Callable[[], None],
    ) -> None:
        if not 0 <= min_size <= max_size or max_size < 1:
            raise ValueError(
                f"Pool sizes min_size={min_size}, max_size={max_size} are invalid; "
                "need 0 <= min_size <= max_size and max_size >= 1"
            )
        self.dsn = dsn
        self.name = name
        self.min_size = min_size
        self.max_size = max_size
        self.timeout = timeout
        self.prepare = prepare
        self.prepared = False
        self._lock = threading.Lock()
        self._pool: ConnectionPool[Conn] | None = None
        self._pid = 0
        _live.add(self)

    def get(self) -> ConnectionPool[Conn]:
        """This process's pool, preparing (migrating) and opening it on first use."""
        pool = self._pool
        if pool is not None and self._pid == os.getpid():
            return pool
        with self._lock:
            pid = os.getpid()
            if self._pool is not None and self._pid != pid:
                # The parent's: kept referenced, never used nor closed here, so that
                # neither its sockets nor its (copied, maybe held) locks are touched.
                _inherited.append(self._pool)
                self._pool = None
            if self._pool is None:
                if not self.prepared:
                    self.prepare()
                    self.prepared = True
                self._pool = ConnectionPool(
                    self.dsn,
                    min_size=self.min_size,
                    max_size=self.max_size,
                    timeout=self.timeout,
                    kwargs={"autocommit": True},
                    name=self.name,
                    open=True,
                )
                self._pid = pid
            return self._pool

    def run(self, work: Callable[[Conn], T]) -> T:
        """Run `work` on a pooled connection; on another one if that one turns out dead.

        A restart or a killed backend leaves dead connections in the pool, and
        a backend being terminated may still answer a health check. The pool
        drops a broken connection when it comes back, so each failed attempt
        removes one: `max_size + 1` attempts always reach a live or new one.
        """
        pool = self.get()
        attempts = self.max_size + 1
        for attempt in range(1, attempts + 1):
            with pool.connection() as conn:
                try:
                    return work(conn)
                except psycopg.OperationalError:
                    if attempt == attempts or not conn.broken:
                        raise
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            if pool is not None and self._pid != os.getpid():
                _inherited.append(pool)  # a parent's: closing it would hang up on it
                pool = None
        if pool is not None:
            pool.close()


def _after_fork_in_child() -> None:
    """A lock held by another thread of the parent at fork time would never be released."""
    for pool in list(_live):
        pool._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def stored_version(conn: Conn, schema: str, table: str, what: str) -> int:
    """The version in `schema`.`table` (0: none yet); a newer one than known is an error.

    `what` names the tables for the error ("the checkpoints", "the store").
    """
    # A query on pg_class, not to_regclass(): after waiting for the lock, the
    # session's catalog cache may still say "no such table" (the winner's commit
    # is not yet taken in), while a query sees every committed row.
    found = conn.execute(
        "SELECT 1 FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n "
        "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s",
        (schema, table),
    ).fetchone()
    if found is None:
        return 0
    row = conn.execute(f'SELECT coalesce(max(version), 0) FROM "{schema}".{table}').fetchone()
    return int(row[0]) if row is not None else 0


def apply_migrations(
    conn: Conn,
    schema: str,
    table: str,
    migrations: Sequence[Sequence[str]],
    version: int,
    target: int,
) -> None:
    """Apply migrations `version + 1 .. target` inside the caller's transaction."""
    s = f'"{schema}"'
    exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    if exists is None:  # CREATE SCHEMA IF NOT EXISTS needs CREATE on the database
        conn.execute(f"CREATE SCHEMA {s}")
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {s}.{table} ("
        "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    for number in range(version + 1, target + 1):
        for statement in migrations[number - 1]:
            conn.execute(statement.format(s=s))
        conn.execute(f"INSERT INTO {s}.{table} (version) VALUES (%s)", (number,))


def migrate(
    dsn: str,
    schema: str,
    *,
    table: str,
    migrations: Sequence[Sequence[str]],
    what: str,
    lock: str,
) -> None:
    """Bring `schema` to the last of `migrations`, once, however many processes ask at once.

    `lock` names the advisory lock (it must not change between releases: a
    process of an older release migrating at the same time takes the same).
    """
    target = len(migrations)
    with psycopg.connect(dsn, autocommit=True) as conn:
        version = stored_version(conn, schema, table, what)
        if version > target:
            raise _newer(schema, what, version, target)
        if version == target:
            return
        with conn.transaction():  # the lock goes with it: safe behind a bouncer too
            digest = hashlib.blake2b(lock.encode(), digest_size=8)
            lock_key = int.from_bytes(digest.digest(), "big", signed=True)
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key,))
            version = stored_version(conn, schema, table, what)
            if version > target:
                raise _newer(schema, what, version, target)
            apply_migrations(conn, schema, table, migrations, version, target)


def _newer(schema: str, what: str, version: int, target: int) -> DeserializationError:
    return DeserializationError(
        f"Schema {schema!r} holds {what} of a newer flowgraph (schema version {version}; "
        f"this one knows {target}); upgrade flowgraph to use it"
    )
