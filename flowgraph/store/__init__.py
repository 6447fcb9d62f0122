"""Long-term memory: documents that outlive a thread, shared by every run that opens the store.

`InMemoryStore()` keeps them in this process, `SQLiteStore(path)` in a file
(it may be the checkpoint file), `PostgresStore(dsn)` and `RedisStore(url)`
on a server (the `postgres` / `redis` extras, imported on first use);
`open_store(url)` takes the URLs `open_checkpointer` takes. Every backend
has the same API (`BaseStore`) and passes one conformance suite. A tool
receives the running graph's store through an `InjectedStore` parameter;
`get_store()` returns it anywhere inside a run.
"""

from typing import TYPE_CHECKING

from flowgraph._lazy import lazy_exports as _lazy_exports
from flowgraph.store._index import Embed, IndexConfig
from flowgraph.store._open import get_store, open_store
from flowgraph.store.base import BaseStore, Item
from flowgraph.store.memory import InMemoryStore
from flowgraph.store.sqlite import SQLiteStore

if TYPE_CHECKING:
    from flowgraph.store.postgres import PostgresStore
    from flowgraph.store.redis import RedisStore

__all__ = [
    "BaseStore",
    "Embed",
    "InMemoryStore",
    "IndexConfig",
    "Item",
    "PostgresStore",
    "RedisStore",
    "SQLiteStore",
    "get_store",
    "open_store",
]

_OPTIONAL = {
    "PostgresStore": "flowgraph.store.postgres",
    "RedisStore": "flowgraph.store.redis",
}

# a server backend is imported only when asked for (its driver is an optional extra)
__getattr__, __dir__ = _lazy_exports("flowgraph.store", _OPTIONAL, globals())
