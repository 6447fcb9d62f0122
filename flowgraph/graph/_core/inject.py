"""Node parameters the engine fills: `config`, `runtime`, `store`, `writer`.

A node is called with the state alone, unless its signature asks for more
by name, as LangGraph's nodes do: `def node(state, config)` gets the run's
RunnableConfig-shaped dict, `runtime` a `Runtime` (context, store, stream
writer), `store` the graph's long-term store, `writer` the "custom" stream
writer. The signature is read once, when the node is added; a node that
asks for none of them is called as it is, so it costs nothing per step.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from flowgraph._context import (
    Runtime,
    current_run,
    current_store,
    get_stream_writer,
    run_config,
)

__all__ = ["INJECTED", "injected_parameters", "injected_values", "with_injections"]

INJECTED = ("config", "runtime", "store", "writer")
"""The parameter names a node (or a conditional edge's path) may ask the engine to fill."""

_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def injected_parameters(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The parameters of `fn` after the state that the engine fills, in INJECTED's order."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin or C callable: it takes the state only
        return ()
    asked = {
        p.name
        for i, p in enumerate(parameters)
        if p.name in INJECTED and p.kind in _KINDS and not (i == 0 and p.kind is not _KINDS[1])
    }
    return tuple(name for name in INJECTED if name in asked)


def _runtime() -> Runtime[Any]:
    info = current_run.get()
    return Runtime(
        context=None if info is None else info.context,
        store=current_store.get(),
        stream_writer=get_stream_writer(),
    )


_MAKERS: dict[str, Callable[[], Any]] = {
    "config": run_config,  # also in a conditional edge's path, which runs outside its node
    "runtime": _runtime,
    "store": current_store.get,
    "writer": get_stream_writer,
}


def injected_values(names: tuple[str, ...]) -> dict[str, Any]:
    """The values of the parameters `names` (of INJECTED) for the task running now."""
    return {name: _MAKERS[name]() for name in names}


def with_injections(
    fn: Callable[..., Any], names: tuple[str, ...], *, is_async: bool
) -> Callable[..., Any]:
    """`fn` as a function of the state alone, filling `names` from the run at each call."""
    if is_async:

        async def call_async(state: Any) -> Any:
            return await fn(state, **injected_values(names))

        wrapper: Callable[..., Any] = call_async
    else:

        def call(state: Any) -> Any:
            return fn(state, **injected_values(names))

        wrapper = call
    if inspect.isfunction(fn) or inspect.ismethod(fn):
        functools.update_wrapper(wrapper, fn, updated=())
    else:
        wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapper
