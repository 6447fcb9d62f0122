"""Checkpoints: the msgpack codec (`serde`) that every checkpointer stores state with."""

from flowgraph.checkpoint import serde

__all__ = ["serde"]
