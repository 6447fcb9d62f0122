"""The graph engine: build a StateGraph, compile it, run it in supersteps."""

from flowgraph._context import (
    RunnableConfig,
    Runtime,
    ToolRuntime,
    get_config,
    get_runtime,
    get_stream_writer,
)
from flowgraph.graph import _codec as _codec  # Command and Send in checkpoints
from flowgraph.graph._builder import StateGraph
from flowgraph.graph._cache import BaseCache, CachePolicy, InMemoryCache
from flowgraph.graph._compiled import CompiledGraph
from flowgraph.graph._functional import Entrypoint, TaskFuture, entrypoint, task
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
    "BaseCache",
    "Budget",
    "CachePolicy",
    "Command",
    "CompiledGraph",
    "Entrypoint",
    "InMemoryCache",
    "Interrupt",
    "RetryPolicy",
    "RunnableConfig",
    "Runtime",
    "Send",
    "StateGraph",
    "StateSnapshot",
    "StreamMode",
    "StreamPart",
    "TaskFuture",
    "ToolRuntime",
    "aonce",
    "entrypoint",
    "get_config",
    "get_runtime",
    "get_stream_writer",
    "interrupt",
    "once",
    "task",
]
