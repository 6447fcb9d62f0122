"""PostgresStore: long-term memory in PostgreSQL, shared by processes on many hosts.

One table, `flowgraph_store`, in a schema of your choice (it may be the
checkpointer's: the store keeps its own version table,
`flowgraph_store_schema_version`). Each value is stored twice: as codec
bytes (`value`, what `get` returns, exactly) and as its JSON view (`doc`,
JSONB). Every filter condition is rendered as SQL over `doc` that means
exactly what the Python rules mean (typed equality, numbers with numbers,
strings in code-point order), so LIMIT and OFFSET run in the server; an
equality also tests `doc @> {...}`, which a GIN index on `doc` answers.
Embeddings are float32 bytes beside the row, ranked in Python (no pgvector
needed).

Every write is one statement (an upsert keeps `created_at` unless the old
item had expired), so concurrent writers never see a half-written item.
Connections come from a psycopg_pool pool opened on first use in each
process (a forked child opens its own); a connection found dead is retried
on another, which is safe because every statement is idempotent. The async
twins run the same code in a worker thread (STYLE: one logic).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from flowgraph.store._filter import Condition
from flowgraph.store.base import BaseStore, NewRow, Row, prefix_range

try:
    from flowgraph.checkpoint._pg import Conn, ProcessPool, check_schema_name, migrate
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "PostgresStore needs psycopg 3 and psycopg_pool: pip install 'flowgraph[postgres]'"
    ) from exc

__all__ = ["SCHEMA_VERSION", "PostgresStore"]

_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # 1: the items; "C" collation: namespaces and keys sort by code point, as elsewhere
        """CREATE TABLE {s}.flowgraph_store (
            namespace text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL,
            value bytea NOT NULL,
            doc jsonb NOT NULL,
            vectors bytea,
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL,
            ttl double precision,
            expires_at double precision,
            PRIMARY KEY (namespace, key))""",
        "CREATE INDEX flowgraph_store_doc ON {s}.flowgraph_store USING gin (doc jsonb_path_ops)",
        "CREATE INDEX flowgraph_store_expiry ON {s}.flowgraph_store (expires_at) "
        "WHERE expires_at IS NOT NULL",
    ),
)
SCHEMA_VERSION = len(_MIGRATIONS)
"""The store schema version this flowgraph writes; a newer one is refused."""

_LIVE = "(expires_at IS NULL OR expires_at > %s)"
_SQL_OPS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _nested(path: Sequence[str], value: Any) -> Any:
    for name in reversed(path):
        value = {name: value}
    return value


def _condition(c: Condition) -> tuple[str, list[Any]]:
    """SQL over `doc` that holds exactly when the condition does (see `_filter`)."""
    path = list(c.path)
    field = "(doc #> %s::text[])"
    if c.op == "$exists":
        return f"{field} IS {'NOT ' if c.operand else ''}NULL", [path]
    if c.op in ("$eq", "$ne"):
        sql, params = (
            f"(doc @> %s::jsonb AND {field} = %s::jsonb)",
            [
                _json(_nested(path, c.operand)),
                path,
                _json(c.operand),
            ],
        )
    elif c.op in ("$in", "$nin"):
        sql, params = f"({field} = ANY(%s::jsonb[]))", [path, [_json(v) for v in c.operand]]
    elif isinstance(c.operand, str):
        return (
            f"(jsonb_typeof({field}) = 'string' AND (doc #>> %s::text[]) COLLATE \"C\" "
            f"{_SQL_OPS[c.op]} %s)",
            [path, path, c.operand],
        )
    else:
        return (
            f"(jsonb_typeof({field}) = 'number' AND {field} {_SQL_OPS[c.op]} %s::jsonb)",
            [path, path, _json(c.operand)],
        )
    if c.op in ("$ne", "$nin"):  # a missing field makes the test NULL: it counts as "not equal"
        return f"({sql} IS NOT TRUE)", params
    return sql, params


def _under(prefix: str | None) -> tuple[str, list[Any]]:
    if prefix is None:
        return "TRUE", []
    low, high = prefix_range(prefix)
    return "(namespace = %s OR (namespace >= %s AND namespace < %s))", [prefix, low, high]


class PostgresStore(BaseStore):
    """Long-term memory in table `flowgraph_store` of one PostgreSQL schema.

    `dsn` is a libpq connection string or URL; `schema` (default `public`)
    is created if missing. The pool opens `min_size` connections and grows
    to `max_size`; a call waits up to `timeout` seconds for a free one.
    Takes the options every store takes (see BaseStore).
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "public",
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
        **options: Any,
    ) -> None:
        check_schema_name(schema)
        super().__init__(**options)
        self.dsn = dsn
        self.schema = schema
        self._table = f'"{schema}".flowgraph_store'
        self._pool = ProcessPool(
            dsn,
            name=f"flowgraph-store-{schema}",
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            prepare=self.setup,
        )

    # -- schema -----------------------------------------------------------------------

    def setup(self) -> None:
        """Create or upgrade the table now (otherwise done on first use); idempotent.

        Several processes may call it at once: an advisory lock lets one
        migrate while the others wait, then find the work done.
        """
        migrate(
            self.dsn,
            self.schema,
            table="flowgraph_store_schema_version",
            migrations=_MIGRATIONS,
            what="a store",
            lock=f"flowgraph-store:{self.schema}",
        )
        self._pool.prepared = True

    # -- connections ------------------------------------------------------------------

    def _query(self, sql: str, params: Sequence[Any] | Mapping[str, Any]) -> list[tuple[Any, ...]]:
        def work(conn: Conn) -> list[tuple[Any, ...]]:
            cursor = conn.execute(sql, params)
            return cursor.fetchall() if cursor.description else []

        return self._pool.run(work)

    def close(self) -> None:
        self._pool.close()

    # -- primitives -------------------------------------------------------------------

    def _put(self, row: NewRow) -> None:
        self._query(
            f"INSERT INTO {self._table} AS s (namespace, key, value, doc, vectors, created_at, "
            "updated_at, ttl, expires_at) VALUES (%s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s) "
            "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, "
            "doc = excluded.doc, vectors = excluded.vectors, created_at = CASE WHEN "
            "s.expires_at <= excluded.updated_at THEN excluded.created_at ELSE s.created_at "
            "END, updated_at = excluded.updated_at, ttl = excluded.ttl, "
            "expires_at = excluded.expires_at",
            row.columns(),
        )

    def _get(self, namespace: str, key: str, now: float, refresh: bool) -> Row | None:
        rows = self._query(
            f"WITH hit AS (SELECT value, created_at, updated_at FROM {self._table} "
            f"WHERE namespace = %(ns)s AND key = %(key)s AND {_LIVE.replace('%s', '%(now)s')}), "
            f"touched AS (UPDATE {self._table} SET expires_at = %(now)s + ttl "
            "WHERE %(refresh)s AND namespace = %(ns)s AND key = %(key)s AND ttl IS NOT NULL "
            "AND expires_at > %(now)s) SELECT value, created_at, updated_at FROM hit",
            {"ns": namespace, "key": key, "now": now, "refresh": refresh},
        )
        if not rows:
            return None
        data, created, updated = rows[0]
        return Row(namespace, key, bytes(data), created, updated)

    def _delete(self, namespace: str, key: str) -> None:
        self._query(
            f"DELETE FROM {self._table} WHERE namespace = %s AND key = %s", (namespace, key)
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
        for condition in conditions:
            sql, more = _condition(condition)
            clauses.append(sql)
            params += more
        columns = "namespace, key, value, created_at, updated_at" + (", vectors" if vectors else "")
        sql = f"SELECT {columns} FROM {self._table} WHERE " + " AND ".join(clauses)
        if window is not None:
            sql += " ORDER BY updated_at DESC, namespace, key LIMIT %s OFFSET %s"
            params += [window[1], window[0]]
        rows = [
            Row(
                r[0],
                r[1],
                bytes(r[2]),
                r[3],
                r[4],
                (bytes(r[5]) if r[5] is not None else None) if vectors else None,
            )
            for r in self._query(sql, params)
        ]
        return rows, window is not None

    def _refresh(self, items: Sequence[tuple[str, str]], now: float) -> None:
        self._query(
            f"UPDATE {self._table} AS t SET expires_at = %s + t.ttl "
            "FROM unnest(%s::text[], %s::text[]) AS u(ns, k) "
            "WHERE t.namespace = u.ns AND t.key = u.k AND t.ttl IS NOT NULL AND t.expires_at > %s",
            (now, [ns for ns, _ in items], [key for _, key in items], now),
        )

    def _namespaces(self, prefix: str | None, now: float) -> list[str]:
        where, params = _under(prefix)
        rows = self._query(
            f"SELECT DISTINCT namespace FROM {self._table} WHERE {where} AND {_LIVE} "
            "ORDER BY namespace",
            [*params, now],
        )
        return [str(r[0]) for r in rows]

    def _sweep(self, now: float) -> int:
        def work(conn: Conn) -> int:
            return conn.execute(
                f"DELETE FROM {self._table} WHERE expires_at <= %s", (now,)
            ).rowcount

        return self._pool.run(work)
