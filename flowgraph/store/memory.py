"""InMemoryStore: long-term memory inside this process, for tests, notebooks and examples.

Values are kept as codec bytes, as the other backends keep them, so what
comes back is a copy built by the same rules (and a value the codec cannot
write fails here as it would there). Safe for many threads; gone with the
process.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flowgraph.store._filter import Condition
from flowgraph.store.base import BaseStore, NewRow, Row, prefix_range

__all__ = ["InMemoryStore"]


@dataclass(slots=True)
class _Entry:
    data: bytes
    view: Any
    vectors: bytes
    created_at: float
    updated_at: float
    ttl: float | None
    expires_at: float | None

    def is_live(self, now: float) -> bool:
        return self.expires_at is None or self.expires_at > now


def _under(namespace: str, prefix: str | None) -> bool:
    if prefix is None or namespace == prefix:
        return True
    low, high = prefix_range(prefix)
    return low <= namespace < high


class InMemoryStore(BaseStore):
    """Items in a dict of this process; takes the options every store takes (see BaseStore)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._items: dict[tuple[str, str], _Entry] = {}
        self._lock = threading.Lock()

    def _row(self, namespace: str, key: str, entry: _Entry, vectors: bool) -> Row:
        return Row(
            namespace,
            key,
            entry.data,
            entry.created_at,
            entry.updated_at,
            entry.vectors if vectors else None,
            entry.view,
        )

    def _put(self, row: NewRow) -> None:
        with self._lock:
            old = self._items.get((row.namespace, row.key))
            created = old.created_at if old is not None and old.is_live(row.now) else row.now
            self._items[(row.namespace, row.key)] = _Entry(
                row.data, row.view, row.vectors, created, row.now, row.ttl, row.expires_at
            )

    def _get(self, namespace: str, key: str, now: float, refresh: bool) -> Row | None:
        with self._lock:
            entry = self._items.get((namespace, key))
            if entry is None or not entry.is_live(now):
                return None
            if refresh and entry.ttl is not None:
                entry.expires_at = now + entry.ttl
            return self._row(namespace, key, entry, False)

    def _delete(self, namespace: str, key: str) -> None:
        with self._lock:
            self._items.pop((namespace, key), None)

    def _search(
        self,
        prefix: str | None,
        conditions: Sequence[Condition],
        now: float,
        window: tuple[int, int] | None,
        vectors: bool,
    ) -> tuple[list[Row], bool]:
        with self._lock:
            rows = [
                self._row(namespace, key, entry, vectors)
                for (namespace, key), entry in self._items.items()
                if entry.is_live(now) and _under(namespace, prefix)
            ]
        return rows, False  # the caller filters and windows

    def _refresh(self, items: Sequence[tuple[str, str]], now: float) -> None:
        with self._lock:
            for pair in items:
                entry = self._items.get(pair)
                if entry is not None and entry.ttl is not None and entry.is_live(now):
                    entry.expires_at = now + entry.ttl

    def _namespaces(self, prefix: str | None, now: float) -> list[str]:
        with self._lock:
            return sorted(
                {
                    namespace
                    for (namespace, _), entry in self._items.items()
                    if entry.is_live(now) and _under(namespace, prefix)
                }
            )

    def _sweep(self, now: float) -> int:
        with self._lock:
            gone = [pair for pair, entry in self._items.items() if not entry.is_live(now)]
            for pair in gone:
                del self._items[pair]
        return len(gone)
