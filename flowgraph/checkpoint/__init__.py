"""Checkpoints: the storage protocol, its backends, and the msgpack codec (`serde`).

`SQLiteCheckpointer(path)` is the embedded default; `MemoryCheckpointer()`
keeps threads in this process. Every backend stores opaque records and a
per-thread message log; the engine (flowgraph.graph) decides what they hold.
"""

from flowgraph.checkpoint import serde
from flowgraph.checkpoint.base import BaseCheckpointer, CheckpointRecord, PendingWrite
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

__all__ = [
    "BaseCheckpointer",
    "CheckpointRecord",
    "MemoryCheckpointer",
    "PendingWrite",
    "SQLiteCheckpointer",
    "serde",
]
