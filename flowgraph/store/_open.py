"""`open_store(url)`: the store a URL names, read as `open_checkpointer` reads it.

So `FLOWGRAPH_DB`, `--db` and a server's store setting can name the
checkpoints and the long-term store with one string (a SQLite file holds
both side by side; a PostgreSQL schema or a Redis database too).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flowgraph._context import current_store
from flowgraph.checkpoint._open import import_backend, parse_location
from flowgraph.store.base import BaseStore
from flowgraph.store.sqlite import SQLiteStore

__all__ = ["get_store", "open_store"]

_STORES = {
    "postgres": ("flowgraph.store.postgres", "PostgresStore"),
    "redis": ("flowgraph.store.redis", "RedisStore"),
}


def open_store(location: str | Path, **options: Any) -> BaseStore:
    """The store a location names: a SQLite path or `sqlite:///…`, `postgresql://…`, `redis://…`.

    `options` go to the store's class (`index=`, `default_ttl=`, ...). A
    server backend whose driver is missing is an ImportError naming the pip
    extra; an unknown scheme a ValueError listing the known ones.
    """
    where = parse_location(location, what="store")
    if where.backend == "sqlite":
        return SQLiteStore(Path(where.target), **options)
    cls = import_backend(*_STORES[where.backend], where)
    store: BaseStore = cls(where.target, **options)
    return store


def get_store() -> BaseStore | None:
    """The store of the graph run this code is part of (a node, a tool), or None outside one."""
    store = current_store.get()
    return store if isinstance(store, BaseStore) else None
