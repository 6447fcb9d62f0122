"""Context variables of the running step.

Lower layers (reducers, models) read these to cooperate with a run without
importing the engine: the engine sets them, everyone else only reads.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

__all__ = ["message_id_factory"]

message_id_factory: ContextVar[Callable[[], str] | None] = ContextVar(
    "flowgraph_message_id_factory", default=None
)
"""Makes ids for id-less messages; None means a fresh uuid4 each time."""
