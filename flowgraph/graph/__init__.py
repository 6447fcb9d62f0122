"""The graph engine: build a StateGraph, compile it, run it in supersteps."""

import typing as _typing

from flowgraph._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from flowgraph._context import (
        RunnableConfig,
        Runtime,
        ToolRuntime,
        get_config,
        get_runtime,
        get_stream_writer,
    )
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

_LAZY = {
    "RunnableConfig": "flowgraph._context",
    "Runtime": "flowgraph._context",
    "ToolRuntime": "flowgraph._context",
    "get_config": "flowgraph._context",
    "get_runtime": "flowgraph._context",
    "get_stream_writer": "flowgraph._context",
    "StateGraph": "flowgraph.graph._builder",
    "BaseCache": "flowgraph.graph._cache",
    "CachePolicy": "flowgraph.graph._cache",
    "InMemoryCache": "flowgraph.graph._cache",
    "CompiledGraph": "flowgraph.graph._compiled",
    "Entrypoint": "flowgraph.graph._functional",
    "TaskFuture": "flowgraph.graph._functional",
    "entrypoint": "flowgraph.graph._functional",
    "task": "flowgraph.graph._functional",
    "interrupt": "flowgraph.graph._interrupt",
    "aonce": "flowgraph.graph._once",
    "once": "flowgraph.graph._once",
    "END": "flowgraph.graph._types",
    "START": "flowgraph.graph._types",
    "Budget": "flowgraph.graph._types",
    "Command": "flowgraph.graph._types",
    "Interrupt": "flowgraph.graph._types",
    "RetryPolicy": "flowgraph.graph._types",
    "Send": "flowgraph.graph._types",
    "StateSnapshot": "flowgraph.graph._types",
    "StreamMode": "flowgraph.graph._types",
    "StreamPart": "flowgraph.graph._types",
}
"""Every exported name and the module that defines it, imported on first use."""

__getattr__, __dir__ = _lazy_exports("flowgraph.graph", _LAZY, globals(), ())

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
