"""Checkpoints: the storage protocol, its backends, and the msgpack codec (`serde`).

`SQLiteCheckpointer(path)` is the embedded default; `MemoryCheckpointer()`
keeps threads in this process. `PostgresCheckpointer(dsn)` and
`RedisCheckpointer(url)` need the `postgres` / `redis` extras and are
imported on first use, so `import flowgraph` never needs their drivers.
Every backend stores opaque records and a
per-thread message log; the engine (flowgraph.graph) decides what they hold.
"""

import typing as _typing

from flowgraph._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from flowgraph.checkpoint import serde
    from flowgraph.checkpoint._open import open_checkpointer
    from flowgraph.checkpoint.base import BaseCheckpointer, CheckpointRecord, PendingWrite
    from flowgraph.checkpoint.memory import MemoryCheckpointer
    from flowgraph.checkpoint.postgres import PostgresCheckpointer
    from flowgraph.checkpoint.redis import RedisCheckpointer
    from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

_LAZY = {
    "open_checkpointer": "flowgraph.checkpoint._open",
    "BaseCheckpointer": "flowgraph.checkpoint.base",
    "CheckpointRecord": "flowgraph.checkpoint.base",
    "PendingWrite": "flowgraph.checkpoint.base",
    "MemoryCheckpointer": "flowgraph.checkpoint.memory",
    "PostgresCheckpointer": "flowgraph.checkpoint.postgres",
    "RedisCheckpointer": "flowgraph.checkpoint.redis",
    "SQLiteCheckpointer": "flowgraph.checkpoint.sqlite",
}
"""Every exported name and the module that defines it, imported on first use."""

__getattr__, __dir__ = _lazy_exports("flowgraph.checkpoint", _LAZY, globals(), ("serde",))

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
