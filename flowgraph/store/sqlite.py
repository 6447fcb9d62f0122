"""SQLiteStore: long-term memory in a SQLite file, shared by every thread and process using it.

One table, `flowgraph_store`, beside the checkpointer's tables if the file
is also a checkpoint file (the store keeps its schema version in a table of
its own, not in `user_version`, which the checkpointer owns). WAL journal,
one connection per thread, and every write a single statement, so
processes writing at once wait for each other (up to `timeout` seconds)
instead of failing.

Each value is stored twice: as codec bytes (what `get` returns, exactly)
and as its JSON view (`doc`), which filters read with SQLite's JSON
functions. Conditions that SQLite can test exactly (scalars) run in SQL, and
LIMIT/OFFSET with them; the others are checked in Python on the rows SQL
returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flowgraph.checkpoint._sqlite import ThreadConnections
from flowgraph.errors import DeserializationError
from flowgraph.store._filter import RANGE_OPS, Condition
from flowgraph.store.base import BaseStore, NewRow, Row, prefix_range

__all__ = ["SCHEMA_VERSION", "SQLiteStore"]

SCHEMA_VERSION = 1
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS flowgraph_store (
        namespace TEXT NOT NULL,
        key TEXT NOT NULL,
        value BLOB NOT NULL,
        doc TEXT NOT NULL,
        vectors BLOB,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        ttl REAL,
        expires_at REAL,
        PRIMARY KEY (namespace, key))""",
    "CREATE INDEX IF NOT EXISTS flowgraph_store_expiry ON flowgraph_store (expires_at) "
    "WHERE expires_at IS NOT NULL",
    "CREATE TABLE IF NOT EXISTS flowgraph_store_meta (version INTEGER NOT NULL)",
)
_LIVE = "(expires_at IS NULL OR expires_at > ?)"
_PUT = (
    "INSERT INTO flowgraph_store (namespace, key, value, doc, vectors, created_at, updated_at, "
    "ttl, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, key) DO UPDATE "
    "SET value = excluded.value, doc = excluded.doc, vectors = excluded.vectors, "
    "created_at = CASE WHEN flowgraph_store.expires_at <= excluded.updated_at "
    "THEN excluded.created_at ELSE flowgraph_store.created_at END, "
    "updated_at = excluded.updated_at, ttl = excluded.ttl, expires_at = excluded.expires_at"
)
_INT64 = 2**63
_NUMBER = "json_type(doc, ?) IN ('integer', 'real')"
_SQL_OPS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _json_path(path: Sequence[str]) -> str | None:
    """SQLite's JSON path for a field path; None if a name cannot be quoted in one."""
    if any('"' in name or "\\" in name for name in path):
        return None
    return "$" + "".join(f'."{name}"' for name in path)


def _equals(path: str, operand: Any) -> tuple[str, list[Any]] | None:
    """SQL true exactly when the field equals a scalar operand (see `_filter.same`)."""
    if operand is None:
        return "json_type(doc, ?) = 'null'", [path]
    if operand is True or operand is False:
        return f"json_type(doc, ?) = '{'true' if operand else 'false'}'", [path]
    if isinstance(operand, str):
        return "(json_type(doc, ?) = 'text' AND json_extract(doc, ?) = ?)", [path, path, operand]
    if isinstance(operand, float) or (isinstance(operand, int) and -_INT64 <= operand < _INT64):
        return f"({_NUMBER} AND json_extract(doc, ?) = ?)", [path, path, operand]
    return None  # a list or dict (or a huge int): left to Python


def _any_of(path: str, operands: Sequence[Any]) -> tuple[str, list[Any]] | None:
    parts, params = [], []
    for operand in operands:
        rendered = _equals(path, operand)
        if rendered is None:
            return None
        parts.append(rendered[0])
        params += rendered[1]
    return ("(" + " OR ".join(parts) + ")" if parts else "0"), params


def _condition(c: Condition) -> tuple[str, list[Any]] | None:
    """SQL exactly equivalent to one condition, or None to leave it to Python."""
    path = _json_path(c.path)
    if path is None:
        return None
    if c.op == "$exists":
        return f"json_type(doc, ?) IS {'NOT ' if c.operand else ''}NULL", [path]
    if c.op in ("$eq", "$ne"):
        rendered = _equals(path, c.operand)
    elif c.op in ("$in", "$nin"):
        rendered = _any_of(path, c.operand)
    else:
        assert c.op in RANGE_OPS
        kind = "json_type(doc, ?) = 'text'" if isinstance(c.operand, str) else _NUMBER
        if isinstance(c.operand, int) and not -_INT64 <= c.operand < _INT64:
            return None
        sql = f"({kind} AND json_extract(doc, ?) {_SQL_OPS[c.op]} ?)"
        return sql, [path, path, c.operand]
    if rendered is None:
        return None
    if c.op in ("$ne", "$nin"):  # a missing field makes the test NULL: it counts as "not equal"
        return f"NOT coalesce({rendered[0]}, 0)", rendered[1]
    return rendered


def _under(prefix: str | None) -> tuple[str, list[Any]]:
    if prefix is None:
        return "1", []
    low, high = prefix_range(prefix)
    return "(namespace = ? OR (namespace >= ? AND namespace < ?))", [prefix, low, high]


class SQLiteStore(BaseStore):
    """Long-term memory in the SQLite file at `path` (created if missing).

    Takes the options every store takes (see BaseStore); `timeout` is how
    long a write waits for another process's write to finish.
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0, **options: Any) -> None:
        super().__init__(**options)
        self.path = str(path)
        self.timeout = timeout
        self._connections = ThreadConnections(self.path, timeout)
        self._db = self._connections.get
        """This thread's connection (a forked child opens its own, leaving the parent's alone)."""
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA:
                db.execute(statement)
            row = db.execute("SELECT max(version) FROM flowgraph_store_meta").fetchone()
            version = row[0] or 0
            if version > SCHEMA_VERSION:
                raise DeserializationError(
                    f"The store in {self.path} was written by a newer flowgraph (store schema "
                    f"{version}, this one knows {SCHEMA_VERSION}); upgrade flowgraph to open it"
                )
            if version < SCHEMA_VERSION:
                db.execute(
                    "INSERT INTO flowgraph_store_meta (version) VALUES (?)", (SCHEMA_VERSION,)
                )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        self._connections.close()

    # -- primitives -------------------------------------------------------------------

    def _put(self, row: NewRow) -> None:
        self._db().execute(
            _PUT,
            row.columns(),
        )

    def _get(self, namespace: str, key: str, now: float, refresh: bool) -> Row | None:
        db = self._db()
        found = db.execute(
            "SELECT value, created_at, updated_at, ttl FROM flowgraph_store "
            f"WHERE namespace = ? AND key = ? AND {_LIVE}",
            (namespace, key, now),
        ).fetchone()
        if found is None:
            return None
        data, created, updated, ttl = found
        if refresh and ttl is not None:
            self._refresh([(namespace, key)], now)
        return Row(namespace, key, bytes(data), created, updated)

    def _delete(self, namespace: str, key: str) -> None:
        self._db().execute(
            "DELETE FROM flowgraph_store WHERE namespace = ? AND key = ?", (namespace, key)
        )

    def _search(
        self,
        prefix: str | None,
        conditions: Sequence[Condition],
        now: float,
        window: tuple[int, int] | None,
        vectors: bool,
    ) -> tuple[list[Row], bool]:
        where, params = _under(prefix)
        clauses = [where, _LIVE]
        params.append(now)
        exact = True
        for condition in conditions:
            rendered = _condition(condition)
            if rendered is None:
                exact = False
                continue
            clauses.append(rendered[0])
            params += rendered[1]
        columns = "namespace, key, value, created_at, updated_at" + (", vectors" if vectors else "")
        sql = f"SELECT {columns} FROM flowgraph_store WHERE " + " AND ".join(clauses)
        windowed = exact and window is not None
        if windowed:
            assert window is not None
            sql += " ORDER BY updated_at DESC, namespace, key LIMIT ? OFFSET ?"
            params += [window[1], window[0]]
        rows = [
            Row(r[0], r[1], bytes(r[2]), r[3], r[4], r[5] if vectors else None)
            for r in self._db().execute(sql, params).fetchall()
        ]
        return rows, windowed

    def _refresh(self, items: Sequence[tuple[str, str]], now: float) -> None:
        self._db().executemany(
            "UPDATE flowgraph_store SET expires_at = ? + ttl "
            f"WHERE namespace = ? AND key = ? AND ttl IS NOT NULL AND {_LIVE}",
            [(now, namespace, key, now) for namespace, key in items],
        )

    def _namespaces(self, prefix: str | None, now: float) -> list[str]:
        where, params = _under(prefix)
        rows = self._db().execute(
            f"SELECT DISTINCT namespace FROM flowgraph_store WHERE {where} AND {_LIVE} "
            "ORDER BY namespace",
            [*params, now],
        )
        return [str(r[0]) for r in rows]

    def _sweep(self, now: float) -> int:
        cursor = self._db().execute(
            "DELETE FROM flowgraph_store WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,)
        )
        return cursor.rowcount
