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
    from flowgraph.graph._compiled import CompiledGraph
    from flowgraph.graph._core.caching import BaseCache, CachePolicy, InMemoryCache
    from flowgraph.graph._core.interrupt import interrupt
    from flowgraph.graph._core.types import (
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
    from flowgraph.graph._definition.builder import StateGraph
    from flowgraph.graph._engine.once import aonce, once
    from flowgraph.graph._functional import Entrypoint, TaskFuture, entrypoint, task

_LAZY = {
    "RunnableConfig": "flowgraph._context",
    "Runtime": "flowgraph._context",
    "ToolRuntime": "flowgraph._context",
    "get_config": "flowgraph._context",
    "get_runtime": "flowgraph._context",
    "get_stream_writer": "flowgraph._context",
    "StateGraph": "flowgraph.graph._definition.builder",
    "BaseCache": "flowgraph.graph._engine.cache",
    "CachePolicy": "flowgraph.graph._engine.cache",
    "InMemoryCache": "flowgraph.graph._engine.cache",
    "CompiledGraph": "flowgraph.graph._compiled",
    "Entrypoint": "flowgraph.graph._functional",
    "TaskFuture": "flowgraph.graph._functional",
    "entrypoint": "flowgraph.graph._functional",
    "task": "flowgraph.graph._functional",
    "interrupt": "flowgraph.graph._core.interrupt",
    "aonce": "flowgraph.graph._engine.once",
    "once": "flowgraph.graph._engine.once",
    "END": "flowgraph.graph._core.types",
    "START": "flowgraph.graph._core.types",
    "Budget": "flowgraph.graph._core.types",
    "Command": "flowgraph.graph._core.types",
    "Interrupt": "flowgraph.graph._core.types",
    "RetryPolicy": "flowgraph.graph._core.types",
    "Send": "flowgraph.graph._core.types",
    "StateSnapshot": "flowgraph.graph._core.types",
    "StreamMode": "flowgraph.graph._core.types",
    "StreamPart": "flowgraph.graph._core.types",
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
