"""The server's documents in PostgreSQL and Redis, beside the checkpoints of those stores.

PostgreSQL: table `flowgraph_server_docs` in the checkpointer's schema; an
`update` holds a transaction-scoped advisory lock on the document's key, so
read-modify-write is atomic across processes even for a document not yet
there. Redis: one string key per document under the checkpointer's prefix
and a set of ids per kind; an `update` is WATCH/MULTI, retried when another
client wrote the key in between.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flowgraph.server._records.docs import (
    DELETE,
    DocStore,
    Updater,
    _apply,
    indexed,
    matches,
    where_sql,
)

__all__ = ["PostgresDocs", "RedisDocs"]


class PostgresDocs(DocStore):
    """Documents in `<schema>.flowgraph_server_docs` of the checkpoints' database."""

    def __init__(self, dsn: str, *, schema: str = "public", max_size: int = 8) -> None:
        from psycopg_pool import ConnectionPool

        self._table = f'"{schema}".flowgraph_server_docs'
        self._pool: ConnectionPool[Any] = ConnectionPool(
            dsn, min_size=1, max_size=max_size, kwargs={"autocommit": True}, open=True
        )
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_key("schema", self._table),))
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self._table} ("
                "kind TEXT NOT NULL, id TEXT NOT NULL, thread_id TEXT, status TEXT, owner TEXT, "
                "created_at DOUBLE PRECISION NOT NULL, data TEXT NOT NULL, PRIMARY KEY (kind, id))"
            )
            conn.execute(
                f"CREATE INDEX IF NOT EXISTS flowgraph_server_docs_thread "
                f"ON {self._table} (kind, thread_id)"
            )
            conn.execute(
                f"CREATE INDEX IF NOT EXISTS flowgraph_server_docs_status "
                f"ON {self._table} (kind, status)"
            )

    def close(self) -> None:
        self._pool.close()

    def get(self, kind: str, doc_id: str) -> dict[str, Any] | None:
        with self._pool.connection() as conn:
            row = conn.execute(
                f"SELECT data FROM {self._table} WHERE kind = %s AND id = %s", (kind, doc_id)
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def _upsert(self, conn: Any, kind: str, doc_id: str, doc: dict[str, Any]) -> None:
        conn.execute(
            f"INSERT INTO {self._table} VALUES (%s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (kind, id) DO UPDATE SET thread_id = EXCLUDED.thread_id, "
            "status = EXCLUDED.status, owner = EXCLUDED.owner, "
            "created_at = EXCLUDED.created_at, data = EXCLUDED.data",
            (kind, doc_id, *indexed(doc), json.dumps(doc)),
        )

    def insert(self, kind: str, doc_id: str, doc: dict[str, Any]) -> bool:
        with self._pool.connection() as conn:
            cursor = conn.execute(
                f"INSERT INTO {self._table} VALUES (%s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (kind, id) DO NOTHING",
                (kind, doc_id, *indexed(doc), json.dumps(doc)),
            )
            return bool(cursor.rowcount == 1)

    def put(self, kind: str, doc_id: str, doc: dict[str, Any]) -> None:
        with self._pool.connection() as conn:
            self._upsert(conn, kind, doc_id, doc)

    def delete(self, kind: str, doc_id: str) -> bool:
        with self._pool.connection() as conn:
            cursor = conn.execute(
                f"DELETE FROM {self._table} WHERE kind = %s AND id = %s", (kind, doc_id)
            )
            return bool(cursor.rowcount == 1)

    def update(self, kind: str, doc_id: str, fn: Updater) -> dict[str, Any] | None:
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_key(kind, doc_id),))
            row = conn.execute(
                f"SELECT data FROM {self._table} WHERE kind = %s AND id = %s", (kind, doc_id)
            ).fetchone()
            current = None if row is None else dict(json.loads(row[0]))
            changed, new = _apply(fn, current)
            if not changed:
                return current
            if new is DELETE:
                conn.execute(
                    f"DELETE FROM {self._table} WHERE kind = %s AND id = %s", (kind, doc_id)
                )
                return None
            self._upsert(conn, kind, doc_id, new)
            return dict(new)

    def scan(self, kind: str, **where: str) -> list[dict[str, Any]]:
        clause, args = where_sql(kind, where, "%s")
        with self._pool.connection() as conn:
            rows = conn.execute(
                f"SELECT data FROM {self._table} WHERE {clause} ORDER BY created_at",
                args,
            ).fetchall()
        return [dict(json.loads(row[0])) for row in rows]


def _key(kind: str, doc_id: str) -> int:
    digest = hashlib.blake2b(f"flowgraph-server:{kind}:{doc_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class RedisDocs(DocStore):
    """Documents under `<prefix>server:<kind>:<id>` keys of the checkpoints' Redis server."""

    def __init__(self, client: Any, *, prefix: str) -> None:
        self.client = client
        self.prefix = f"{prefix}server:"

    def _doc_key(self, kind: str, doc_id: str) -> str:
        return f"{self.prefix}{kind}:{doc_id}"

    def _index(self, kind: str) -> str:
        return f"{self.prefix}{kind}"

    def close(self) -> None:
        self.client.close()

    def get(self, kind: str, doc_id: str) -> dict[str, Any] | None:
        raw = self.client.get(self._doc_key(kind, doc_id))
        return None if raw is None else dict(json.loads(raw))

    def insert(self, kind: str, doc_id: str, doc: dict[str, Any]) -> bool:
        stored = self.client.set(self._doc_key(kind, doc_id), json.dumps(doc), nx=True)
        if stored:
            self.client.sadd(self._index(kind), doc_id)
        return bool(stored)

    def put(self, kind: str, doc_id: str, doc: dict[str, Any]) -> None:
        with self.client.pipeline(transaction=True) as pipe:
            pipe.set(self._doc_key(kind, doc_id), json.dumps(doc))
            pipe.sadd(self._index(kind), doc_id)
            pipe.execute()

    def delete(self, kind: str, doc_id: str) -> bool:
        with self.client.pipeline(transaction=True) as pipe:
            pipe.delete(self._doc_key(kind, doc_id))
            pipe.srem(self._index(kind), doc_id)
            removed, _ = pipe.execute()
        return bool(removed)

    def update(self, kind: str, doc_id: str, fn: Updater) -> dict[str, Any] | None:
        import redis

        key = self._doc_key(kind, doc_id)
        while True:
            with self.client.pipeline(transaction=True) as pipe:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    current = None if raw is None else dict(json.loads(raw))
                    changed, new = _apply(fn, current)
                    if not changed:
                        pipe.unwatch()
                        return current
                    pipe.multi()
                    if new is DELETE:
                        pipe.delete(key)
                        pipe.srem(self._index(kind), doc_id)
                    else:
                        pipe.set(key, json.dumps(new))
                        pipe.sadd(self._index(kind), doc_id)
                    pipe.execute()
                    return None if new is DELETE else dict(new)
                except redis.WatchError:
                    continue

    def scan(self, kind: str, **where: str) -> list[dict[str, Any]]:
        ids = sorted(
            m.decode() if isinstance(m, bytes) else m
            for m in self.client.smembers(self._index(kind))
        )
        docs: list[dict[str, Any]] = []
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            for raw in self.client.mget([self._doc_key(kind, i) for i in batch]):
                if raw is not None:
                    doc = dict(json.loads(raw))
                    if matches(doc, where):
                        docs.append(doc)
        docs.sort(key=lambda d: float(d.get("created_at") or 0.0))
        return docs
