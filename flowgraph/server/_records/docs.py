"""Where the server keeps its own records: small JSON documents beside the checkpoints.

Thread metadata, run records and thread claims are documents of a `kind`
("thread", "run", "claim") keyed by id. They live in the same store as the
checkpoints (the same SQLite file, PostgreSQL database or Redis server, in
tables and keys of their own), so every server process on that store sees
them. A backend needs only get/insert/put/delete, an atomic
read-modify-write (`update`) and a filtered `scan` on the few fields runs
are looked up by.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import closing
from typing import Any

from flowgraph.checkpoint._sqlite import ThreadConnections

__all__ = ["DELETE", "INDEXED", "DocStore", "MemoryDocs", "SQLiteDocs", "Updater", "indexed"]

INDEXED = ("thread_id", "status", "owner")
"""Document fields a scan may filter on (SQL backends keep them as columns)."""


class _Delete:
    def __repr__(self) -> str:
        return "DELETE"


DELETE: Any = _Delete()
"""Returned by an `update` function: remove the document."""

Updater = Callable[[dict[str, Any] | None], Any]
"""Given the current document (None: absent), the new one, None to leave it, or DELETE."""


def indexed(doc: dict[str, Any]) -> tuple[str | None, str | None, str | None, float]:
    return (
        doc.get("thread_id"),
        doc.get("status"),
        doc.get("owner"),
        float(doc.get("created_at") or 0.0),
    )


def where_sql(kind: str, where: dict[str, str], mark: str) -> tuple[str, list[Any]]:
    """The WHERE clause (placeholders `mark`) and arguments of a scan on indexed fields."""
    clauses = [f"kind = {mark}"]
    args: list[Any] = [kind]
    for key, value in where.items():
        if key not in INDEXED:
            raise ValueError(f"scan() filters on {INDEXED}, not {key!r}")
        clauses.append(f"{key} = {mark}")
        args.append(value)
    return " AND ".join(clauses), args


def matches(doc: dict[str, Any], where: dict[str, str]) -> bool:
    return all(doc.get(k) == v for k, v in where.items())


class DocStore(ABC):
    """JSON documents by (kind, id); every method is one atomic step."""

    @abstractmethod
    def get(self, kind: str, doc_id: str) -> dict[str, Any] | None: ...

    @abstractmethod
    def insert(self, kind: str, doc_id: str, doc: dict[str, Any]) -> bool:
        """Store a new document; False (storing nothing) when the id is taken."""

    @abstractmethod
    def put(self, kind: str, doc_id: str, doc: dict[str, Any]) -> None: ...

    @abstractmethod
    def delete(self, kind: str, doc_id: str) -> bool: ...

    @abstractmethod
    def update(self, kind: str, doc_id: str, fn: Updater) -> dict[str, Any] | None:
        """Read, change and write one document atomically; the document after (None: gone)."""

    @abstractmethod
    def scan(self, kind: str, **where: str) -> list[dict[str, Any]]:
        """Documents of `kind` whose indexed fields equal `where`, oldest first."""

    def close(self) -> None:  # noqa: B027 - optional: the memory store holds nothing
        """Release connections."""


def _apply(fn: Updater, current: dict[str, Any] | None) -> tuple[bool, Any]:
    new = fn(None if current is None else dict(current))
    return new is not None, new


class MemoryDocs(DocStore):
    """Documents in this process only (the store of a MemoryCheckpointer)."""

    def __init__(self) -> None:
        self._docs: dict[tuple[str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, kind: str, doc_id: str) -> dict[str, Any] | None:
        with self._lock:
            doc = self._docs.get((kind, doc_id))
            return None if doc is None else json.loads(json.dumps(doc))

    def insert(self, kind: str, doc_id: str, doc: dict[str, Any]) -> bool:
        with self._lock:
            if (kind, doc_id) in self._docs:
                return False
            self._docs[(kind, doc_id)] = json.loads(json.dumps(doc))
            return True

    def put(self, kind: str, doc_id: str, doc: dict[str, Any]) -> None:
        with self._lock:
            self._docs[(kind, doc_id)] = json.loads(json.dumps(doc))

    def delete(self, kind: str, doc_id: str) -> bool:
        with self._lock:
            return self._docs.pop((kind, doc_id), None) is not None

    def update(self, kind: str, doc_id: str, fn: Updater) -> dict[str, Any] | None:
        with self._lock:
            current = self._docs.get((kind, doc_id))
            changed, new = _apply(fn, json.loads(json.dumps(current)) if current else None)
            if not changed:
                return None if current is None else json.loads(json.dumps(current))
            if new is DELETE:
                self._docs.pop((kind, doc_id), None)
                return None
            self._docs[(kind, doc_id)] = json.loads(json.dumps(new))
            return dict(new)

    def scan(self, kind: str, **where: str) -> list[dict[str, Any]]:
        with self._lock:
            found = [
                json.loads(json.dumps(doc))
                for (k, _), doc in self._docs.items()
                if k == kind and matches(doc, where)
            ]
        found.sort(key=lambda d: float(d.get("created_at") or 0.0))
        return found


_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS flowgraph_server_docs (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    thread_id TEXT,
    status TEXT,
    owner TEXT,
    created_at REAL NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE INDEX IF NOT EXISTS flowgraph_server_docs_thread ON flowgraph_server_docs (kind, thread_id);
CREATE INDEX IF NOT EXISTS flowgraph_server_docs_status ON flowgraph_server_docs (kind, status);
"""


class SQLiteDocs(DocStore):
    """Documents in table `flowgraph_server_docs` of the checkpoints' SQLite file."""

    def __init__(self, path: str, *, timeout: float = 30.0) -> None:
        self.path = path
        self.timeout = timeout
        self._connections = ThreadConnections(path, timeout)
        self._db = self._connections.get
        self._db().executescript(_SQLITE_SCHEMA)

    def close(self) -> None:
        self._connections.close()

    def get(self, kind: str, doc_id: str) -> dict[str, Any] | None:
        row = (
            self._db()
            .execute(
                "SELECT data FROM flowgraph_server_docs WHERE kind = ? AND id = ?", (kind, doc_id)
            )
            .fetchone()
        )
        return None if row is None else dict(json.loads(row[0]))

    def _write(self, db: sqlite3.Connection, kind: str, doc_id: str, doc: dict[str, Any]) -> None:
        db.execute(
            "INSERT OR REPLACE INTO flowgraph_server_docs VALUES (?, ?, ?, ?, ?, ?, ?)",
            (kind, doc_id, *indexed(doc), json.dumps(doc)),
        )

    def insert(self, kind: str, doc_id: str, doc: dict[str, Any]) -> bool:
        cursor = self._db().execute(
            "INSERT OR IGNORE INTO flowgraph_server_docs VALUES (?, ?, ?, ?, ?, ?, ?)",
            (kind, doc_id, *indexed(doc), json.dumps(doc)),
        )
        return cursor.rowcount == 1

    def put(self, kind: str, doc_id: str, doc: dict[str, Any]) -> None:
        self._write(self._db(), kind, doc_id, doc)

    def delete(self, kind: str, doc_id: str) -> bool:
        cursor = self._db().execute(
            "DELETE FROM flowgraph_server_docs WHERE kind = ? AND id = ?", (kind, doc_id)
        )
        return cursor.rowcount == 1

    def update(self, kind: str, doc_id: str, fn: Updater) -> dict[str, Any] | None:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute(
                "SELECT data FROM flowgraph_server_docs WHERE kind = ? AND id = ?", (kind, doc_id)
            ).fetchone()
            current = None if row is None else dict(json.loads(row[0]))
            changed, new = _apply(fn, current)
            if not changed:
                result = current
            elif new is DELETE:
                db.execute(
                    "DELETE FROM flowgraph_server_docs WHERE kind = ? AND id = ?", (kind, doc_id)
                )
                result = None
            else:
                self._write(db, kind, doc_id, new)
                result = dict(new)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return result

    def scan(self, kind: str, **where: str) -> list[dict[str, Any]]:
        clause, args = where_sql(kind, where, "?")
        with closing(
            self._db().execute(
                f"SELECT data FROM flowgraph_server_docs WHERE {clause} ORDER BY created_at",
                args,
            )
        ) as cursor:
            return [dict(json.loads(row[0])) for row in cursor]
