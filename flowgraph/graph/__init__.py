"""The graph engine: build a StateGraph, compile it, run it in supersteps."""

from flowgraph.graph._builder import StateGraph
from flowgraph.graph._compiled import CompiledGraph
from flowgraph.graph._types import (
    END,
    START,
    Budget,
    Command,
    Interrupt,
    RetryPolicy,
    Send,
    StreamMode,
    StreamPart,
)

__all__ = [
    "END",
    "START",
    "Budget",
    "Command",
    "CompiledGraph",
    "Interrupt",
    "RetryPolicy",
    "Send",
    "StateGraph",
    "StreamMode",
    "StreamPart",
]
