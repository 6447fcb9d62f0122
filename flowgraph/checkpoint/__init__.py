"""Checkpoints: the storage protocol, its backends, and the msgpack codec (`serde`).

`SQLiteCheckpointer(path)` is the embedded default; `MemoryCheckpointer()`
keeps threads in this process. `PostgresCheckpointer(dsn)` and
`RedisCheckpointer(url)` need the `postgres` / `redis` extras and are
imported on first use, so `import flowgraph` never needs their drivers.
Every backend stores opaque records and a
per-thread message log; the engine (flowgraph.graph) decides what they hold.
"""

from typing import TYPE_CHECKING

from flowgraph._lazy import lazy_exports as _lazy_exports
from flowgraph.checkpoint import serde
from flowgraph.checkpoint._open import open_checkpointer
from flowgraph.checkpoint.base import BaseCheckpointer, CheckpointRecord, PendingWrite
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

if TYPE_CHECKING:
    from flowgraph.checkpoint.postgres import PostgresCheckpointer
    from flowgraph.checkpoint.redis import RedisCheckpointer

__all__ = [
    "BaseCheckpointer",
    "CheckpointRecord",
    "MemoryCheckpointer",
    "PendingWrite",
    "PostgresCheckpointer",
    "RedisCheckpointer",
    "SQLiteCheckpointer",
    "open_checkpointer",
    "serde",
]

_OPTIONAL = {
    "PostgresCheckpointer": "flowgraph.checkpoint.postgres",
    "RedisCheckpointer": "flowgraph.checkpoint.redis",
}


# a server backend is imported only when asked for (its driver is an optional extra)
__getattr__, __dir__ = _lazy_exports("flowgraph.checkpoint", _OPTIONAL, globals())
