"""Checkpoints: the storage protocol, its backends, and the msgpack codec (`serde`).

`SQLiteCheckpointer(path)` is the embedded default; `MemoryCheckpointer()`
keeps threads in this process. `PostgresCheckpointer(dsn)` and
`RedisCheckpointer(url)` need the `postgres` / `redis` extras and are
imported on first use, so `import flowgraph` never needs their drivers.
Every backend stores opaque records and a
per-thread message log; the engine (flowgraph.graph) decides what they hold.
"""

from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    """Import a server backend only when it is asked for (its driver is an optional extra)."""
    module = _OPTIONAL.get(name)
    if module is None:
        raise AttributeError(f"module 'flowgraph.checkpoint' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
