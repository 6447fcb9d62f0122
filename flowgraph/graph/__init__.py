"""The graph engine: build a StateGraph, compile it, run it in supersteps."""

from flowgraph.graph._builder import StateGraph
from flowgraph.graph._compiled import CompiledGraph
from flowgraph.graph._interrupt import interrupt
from flowgraph.graph._once import aonce, once
from flowgraph.graph._types import (
    END,
    START,
    Budget,
    Command,
    Interrupt,
    RetryPolicy,
    Send,
    StateSnapshot,
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
    "StateSnapshot",
    "StreamMode",
    "StreamPart",
    "aonce",
    "interrupt",
    "once",
]
