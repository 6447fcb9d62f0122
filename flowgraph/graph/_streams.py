"""How a compiled graph's `stream`, `astream` and `invoke(stream_mode=...)` read a run.

The engine hands every event of a run to a sink as a `StreamPart`; this
module is the reader side: the lazy async generator of parts the stream
methods return, the choice between flowgraph's parts (`mode=`) and
LangGraph's items (everything else, see `_items`), what `invoke` returns
when asked for LangGraph's stream modes or `version="v2"`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Callable, Coroutine, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any, Generic, TypedDict, TypeVar

from flowgraph.graph._core.types import STREAM_MODES, Budget, Interrupt, StreamMode, StreamPart
from flowgraph.graph._engine.run import Run
from flowgraph.graph._engine.setup import RunOptions
from flowgraph.graph._items import LangGraphItems, StreamVersion

__all__ = [
    "GraphOutput",
    "Invoked",
    "RunKeywords",
    "StreamKeywords",
    "engine_modes",
    "stream_parts",
    "stream_settings",
]

_MODES = STREAM_MODES
_DONE: Any = object()
OutputT = TypeVar("OutputT")


def engine_modes(mode: StreamMode | Sequence[StreamMode]) -> frozenset[str]:
    """flowgraph's `mode=` as the set of modes the engine streams."""
    modes = frozenset([mode] if isinstance(mode, str) else mode)
    unknown = modes - _MODES
    if unknown or not modes:
        raise ValueError(
            f"Unknown stream mode(s) {sorted(unknown)}; use one or more of {sorted(_MODES)}"
        )
    return modes


class RunKeywords(TypedDict, total=False):
    """The keywords `invoke` and `ainvoke` take besides their result's shape (for their
    overloads); `stream` and `astream` take them too, see `StreamKeywords`."""

    thread_id: str | None
    checkpoint_id: str | None
    recursion_limit: int
    budget: Budget | None
    interrupt_before: Sequence[str] | None
    interrupt_after: Sequence[str] | None
    wait: bool | float
    run_id: str | None
    stop: threading.Event | None
    context: Any
    configurable: Mapping[str, Any] | None
    rerun_tool_calls: bool


class StreamKeywords(RunKeywords, total=False):
    """The keywords `stream` and `astream` take besides their modes (for their overloads)."""

    subgraphs: bool
    version: StreamVersion


def stream_settings(
    options: RunOptions,
    mode: StreamMode | Sequence[StreamMode] | None,
    stream_mode: StreamMode | Sequence[StreamMode] | None,
    subgraphs: bool,
    version: StreamVersion,
) -> tuple[RunOptions, LangGraphItems | None]:
    """The run's stream settings, and LangGraph's item shapes unless `mode=` asks for parts.

    Called as LangGraph code calls it (no `mode=`), a stream yields what
    LangGraph's yields: its default mode is "updates".
    """
    if mode is not None:
        if stream_mode is not None or version != "v1":
            raise TypeError(
                "stream() takes mode= (flowgraph's StreamParts) or LangGraph's stream_mode= / "
                "version= (its dicts, tuples and typed parts), not both"
            )
        return replace(options, modes=engine_modes(mode), subgraphs=subgraphs), None
    items = LangGraphItems(
        stream_mode if stream_mode is not None else "updates",
        subgraphs=subgraphs,
        thread_id=options.thread_id,
        version=version,
    )
    # LangGraph streams a subgraph's tokens and custom data only with subgraphs=True
    shaped = replace(options, modes=items.engine_modes, subgraphs=subgraphs, passed_up=frozenset())
    return shaped, items


async def stream_parts(
    start: Callable[[RunOptions], Coroutine[Any, Any, Run]],
    options: RunOptions,
) -> AsyncGenerator[StreamPart, None]:
    """The run `start(options)` begins, as it happens, one step at a time as the reader asks.

    A step starts only when the reader has taken every part of the steps
    before and asks for the next one (tokens and custom data still flow
    while a step runs); a reader that stops, or closes the stream, stops
    the run before its next step.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    loop_thread = threading.get_ident()

    def sink(part: StreamPart) -> None:
        if threading.get_ident() == loop_thread:
            queue.put_nowait(part)
        else:  # a sync node streaming tokens from its worker thread
            loop.call_soon_threadsafe(queue.put_nowait, part)

    closed = options.closed or threading.Event()
    asking = asyncio.Event()
    """Set while the reader waits for a part and none is queued."""

    async def caught_up() -> None:
        while not (asking.is_set() and queue.empty()):
            if asking.is_set():
                await asyncio.sleep(0)  # a part is on its way to the waiting reader
            else:
                await asking.wait()

    options = replace(options, sink=sink, closed=closed, caught_up=caught_up)
    runner = asyncio.create_task(start(options))
    runner.add_done_callback(lambda _: queue.put_nowait(_DONE))
    try:
        while True:
            if queue.empty():
                asking.set()
            part = await queue.get()
            asking.clear()
            if part is _DONE:
                break
            yield part
        await runner
    finally:
        closed.set()
        if not runner.done():
            runner.cancel()
            with suppress(asyncio.CancelledError):
                await runner


# -- invoke with LangGraph's stream modes -------------------------------------------


@dataclass(frozen=True)
class GraphOutput(Generic[OutputT]):
    """What `invoke(..., version="v2")` returns, as LangGraph 1.1's: the final state
    (`value`, in the schema's type) and the interrupts the run paused at."""

    value: OutputT
    interrupts: tuple[Interrupt, ...] = ()


class Invoked:
    """What `invoke(..., stream_mode=..., version=...)` returns, as LangGraph's does.

    "values" (the default) is the final state: returned as it is for v1, in a
    `GraphOutput` for v2. Any other mode returns the list of the stream's
    items, as `stream()` with the same arguments yields them.
    """

    def __init__(self, stream_mode: StreamMode | Sequence[StreamMode], version: str) -> None:
        if version not in ("v1", "v2"):
            raise ValueError(f"invoke(version={version!r}): use 'v1' or 'v2'")
        self.version = version
        self.chunks = stream_mode != "values"
        """True when the result is the list of items, not the final state."""

    def final(self, out: Any, interrupts: tuple[Interrupt, ...]) -> Any:
        """The result of a run that returned `out` (the state as `invoke` returns it)."""
        return GraphOutput(out, interrupts) if self.version == "v2" else out
