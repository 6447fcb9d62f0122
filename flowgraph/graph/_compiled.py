"""CompiledGraph: the runnable app `StateGraph.compile()` returns.

A thin facade: `_engine.setup.prepare_run` turns the call into a ready `Run`, the
one run loop executes it; the sync methods bridge to the async ones, and
the state API reads and writes the thread's checkpoints.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import suppress
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypedDict, overload

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.graph._config import read_config
from flowgraph.graph._core.caching import BaseCache
from flowgraph.graph._core.interrupt import with_interrupts
from flowgraph.graph._core.types import (
    Budget,
    StreamMode,
    StreamPart,
)
from flowgraph.graph._diagrams import Diagrams
from flowgraph.graph._engine.bridge import iterate_sync, run_sync
from flowgraph.graph._engine.cache import cached_nodes, namespace_of
from flowgraph.graph._engine.execute import execute
from flowgraph.graph._engine.run import Engine, Run
from flowgraph.graph._engine.setup import RunOptions
from flowgraph.graph._engine.subgraph import subgraph_node
from flowgraph.graph._engine.superstep import Plan
from flowgraph.graph._items import LangGraphItems
from flowgraph.graph._thread.replay import ThreadCache
from flowgraph.graph._thread_api import ThreadAPI

if TYPE_CHECKING:
    import networkx as nx
    from typing_extensions import Unpack

    from flowgraph.graph._core.schema import StateAdapter
    from flowgraph.graph._core.spec import GraphSpec

__all__ = ["CompiledGraph"]

_MODES = frozenset({"updates", "values", "messages", "custom", "events"})
_DONE: Any = object()


def _modes(mode: StreamMode | Sequence[StreamMode]) -> frozenset[str]:
    modes = frozenset([mode] if isinstance(mode, str) else mode)
    unknown = modes - _MODES
    if unknown or not modes:
        raise ValueError(
            f"Unknown stream mode(s) {sorted(unknown)}; use one or more of {sorted(_MODES)}"
        )
    return modes


class StreamKeywords(TypedDict, total=False):
    """The keywords `stream` and `astream` take besides their modes (for their overloads)."""

    subgraphs: bool
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


def _names(nodes: Sequence[str]) -> frozenset[str]:
    return frozenset(nodes) if nodes else _NO_NAMES  # most runs name none: nothing to build


_NO_NAMES: frozenset[str] = frozenset()


class CompiledGraph(ThreadAPI, Diagrams):
    """A validated graph, ready to `invoke`, `stream`, or be used as a node of another graph."""

    def __init__(
        self,
        spec: GraphSpec,
        builder: Any,
        *,
        checkpointer: BaseCheckpointer | None,
        interrupt_before: tuple[str, ...],
        interrupt_after: tuple[str, ...],
        budget: Budget | None,
        name: str,
        store: Any = None,
        cache: BaseCache | None = None,
    ) -> None:
        self.spec = spec
        """The frozen definition the engine runs (see `_core.spec`)."""
        self.builder = builder
        """The `StateGraph` this app was compiled from (`app.builder.compile(...)` makes
        another app of it); typed Any since the builder imports this module."""
        plan = Plan(spec)
        plan.nodes = cached_nodes(plan.nodes, cache)
        remaining = tuple(k for k, kind in spec.state.managed.items() if kind == "remaining_steps")
        self.engine = Engine(plan, spec.state, name, remaining)
        self.checkpointer = checkpointer
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.budget = budget
        self.name = name
        self.store = store
        """The long-term store runs hand to nodes and tools (`compile(store=...)`), or None."""
        self.cache = cache
        """Where nodes with a cache_policy keep their results (`compile(cache=...)`), or None."""
        self._cache = ThreadCache() if checkpointer is not None else None

    @property
    def graph(self) -> nx.MultiDiGraph[str]:
        """The structure: nodes (with `spec` and `kind`) and edges (with `kind`, `label`)."""
        graph: nx.MultiDiGraph[str] = self.builder.graph
        return graph

    @property
    def schema(self) -> type[Any]:
        return self.spec.schema

    def _options(
        self,
        *,
        thread_id: str | None,
        checkpoint_id: str | None,
        recursion_limit: int,
        budget: Budget | None,
        interrupt_before: Sequence[str] | None,
        interrupt_after: Sequence[str] | None,
        inline_sync: bool,
        wait: bool | float = False,
        run_id: str | None = None,
        stop: threading.Event | None = None,
        sink: Callable[[StreamPart], None] | None = None,
        modes: frozenset[str] = frozenset(),
        rerun_tool_calls: bool = False,
    ) -> RunOptions:
        for name in (*(interrupt_before or ()), *(interrupt_after or ())):
            if name not in self.engine.plan.nodes:
                raise ValueError(f"interrupt_before/after names '{name}', which is not a node")
        return RunOptions(
            thread_id=thread_id,
            checkpoint_id=checkpoint_id,
            recursion_limit=recursion_limit,
            budget=budget if budget is not None else self.budget,
            inline_sync=inline_sync,
            sink=sink,
            modes=modes,
            interrupt_before=_names(
                self.interrupt_before if interrupt_before is None else interrupt_before
            ),
            interrupt_after=_names(
                self.interrupt_after if interrupt_after is None else interrupt_after
            ),
            wait=wait,
            run_id=run_id,
            stop=stop,
            rerun_tool_calls=rerun_tool_calls,
        )

    def _configure(
        self,
        options: RunOptions,
        config: Mapping[str, Any] | None,
        context: Any,
        configurable: Mapping[str, Any] | None,
    ) -> None:
        """Merge LangGraph's `config` dict, `configurable=` and `context=` into `options`.

        Called only when one of them (or a thread) is given, so a plain run
        pays nothing for them.
        """
        call = read_config(
            config,
            thread_id=options.thread_id,
            checkpoint_id=options.checkpoint_id,
            recursion_limit=options.recursion_limit,
            run_id=options.run_id,
            configurable=configurable,
            context=context,
            context_schema=self.spec.context_schema,
        )
        options.thread_id, options.checkpoint_id = call.thread_id, call.checkpoint_id
        options.recursion_limit, options.run_id = call.recursion_limit, call.run_id
        options.info = call.info

    # -- running -----------------------------------------------------------------

    def _run(self, input: Any, options: RunOptions) -> Coroutine[Any, Any, Run]:
        """One run, start to end: the engine's coroutine (`_engine.execute`), which the
        caller awaits or the sync bridge runs, so no facade code sits between them."""
        return execute(
            self.engine,
            self.checkpointer,
            self._input(input),
            options,
            cache=self._cache,
            store=self.store,
            name=self.name,
        )

    def _input(self, input: Any) -> Any:
        """The caller's input as the graph takes it (the functional API wraps it)."""
        return input

    def _output(self, run: Run) -> Any:
        """A finished run's state as `invoke` returns it, with its interrupts if it paused."""
        out = self.engine.state.output(run.values)
        if run.interrupts:
            out = with_interrupts(out, run.interrupts)
        return out

    async def ainvoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        thread_id: str | None = None,
        checkpoint_id: str | None = None,
        recursion_limit: int = 100,
        budget: Budget | None = None,
        interrupt_before: Sequence[str] | None = None,
        interrupt_after: Sequence[str] | None = None,
        wait: bool | float = False,
        run_id: str | None = None,
        stop: threading.Event | None = None,
        context: Any = None,
        configurable: Mapping[str, Any] | None = None,
        rerun_tool_calls: bool = False,
    ) -> Any:
        """`invoke` from async code: the same arguments, the same result."""
        options = self._options(
            thread_id=thread_id,
            checkpoint_id=checkpoint_id,
            recursion_limit=recursion_limit,
            budget=budget,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            wait=wait,
            run_id=run_id,
            stop=stop,
            rerun_tool_calls=rerun_tool_calls,
            inline_sync=False,
        )
        if config is not None or context is not None or configurable or thread_id is not None:
            self._configure(options, config, context, configurable)
        return self._output(await self._run(input, options))

    def invoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        thread_id: str | None = None,
        checkpoint_id: str | None = None,
        recursion_limit: int = 100,
        budget: Budget | None = None,
        interrupt_before: Sequence[str] | None = None,
        interrupt_after: Sequence[str] | None = None,
        wait: bool | float = False,
        run_id: str | None = None,
        stop: threading.Event | None = None,
        context: Any = None,
        configurable: Mapping[str, Any] | None = None,
        rerun_tool_calls: bool = False,
    ) -> Any:
        """Run the graph and return the state (in the schema's type) where it stopped.

        `input` is a dict of fields for a new step, None to resume the thread
        after its last checkpoint, or `Command(resume=...)` to answer an
        `interrupt()`; a Command's `update=` is written as the input step and
        its `goto=` (node names, Sends) runs next, with what the thread still
        had to do; `checkpoint_id` forks the thread from that checkpoint.
        A run on a thread another run is writing fails with ConcurrentRunError;
        `wait=True` (or a number of seconds) waits its turn instead, among the
        runs of this process. `run_id` names the run in its checkpoints' metadata
        (default: a fresh id); a run whose id is already the thread's head's (a
        task queue delivering the same run twice) does not apply its input again
        but resumes the thread.

        LangGraph's `config` dict is accepted too: `invoke(input, {"configurable":
        {"thread_id": "1", ...}, "recursion_limit": 50})`; the caller's own
        `configurable` values (also given as `configurable=`) reach nodes that
        take a `config` parameter, and `context` those that take a `runtime`.
        A run that paused at `interrupt()` returns its interrupts under
        `"__interrupt__"` (see `with_interrupts`).
        """
        options = self._options(
            thread_id=thread_id,
            checkpoint_id=checkpoint_id,
            recursion_limit=recursion_limit,
            budget=budget,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            wait=wait,
            run_id=run_id,
            stop=stop,
            rerun_tool_calls=rerun_tool_calls,
            inline_sync=True,
        )
        if config is not None or context is not None or configurable or thread_id is not None:
            self._configure(options, config, context, configurable)
        return self._output(run_sync(self._run(input, options), direct=self.engine.plan.all_sync))

    async def _astream(self, input: Any, options: RunOptions) -> AsyncGenerator[StreamPart, None]:
        """The run as it happens, one step at a time as the reader asks for more.

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
        runner = asyncio.create_task(self._run(input, options))
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

    def _streaming(
        self,
        options: RunOptions,
        mode: StreamMode | Sequence[StreamMode] | None,
        stream_mode: StreamMode | Sequence[StreamMode] | None,
        subgraphs: bool,
    ) -> tuple[RunOptions, LangGraphItems | None]:
        """The run's stream settings, and LangGraph's item shapes when `stream_mode` asks."""
        if stream_mode is None:
            return replace(options, modes=_modes(mode or "updates"), subgraphs=subgraphs), None
        if mode is not None:
            raise TypeError(
                "stream() takes mode= (flowgraph's StreamParts) or stream_mode= (LangGraph's "
                "dicts and tuples), not both"
            )
        items = LangGraphItems(stream_mode, subgraphs=subgraphs, thread_id=options.thread_id)
        # LangGraph streams a subgraph's tokens and custom data only with subgraphs=True
        shaped = replace(
            options, modes=items.engine_modes, subgraphs=subgraphs, passed_up=frozenset()
        )
        return shaped, items

    @overload
    def astream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        mode: StreamMode | Sequence[StreamMode] | None = None,
        stream_mode: None = None,
        **options: Unpack[StreamKeywords],
    ) -> AsyncIterator[StreamPart]: ...

    @overload
    def astream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        mode: None = None,
        stream_mode: StreamMode | Sequence[StreamMode],
        **options: Unpack[StreamKeywords],
    ) -> AsyncIterator[Any]: ...

    def astream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        mode: StreamMode | Sequence[StreamMode] | None = None,
        stream_mode: StreamMode | Sequence[StreamMode] | None = None,
        subgraphs: bool = False,
        thread_id: str | None = None,
        checkpoint_id: str | None = None,
        recursion_limit: int = 100,
        budget: Budget | None = None,
        interrupt_before: Sequence[str] | None = None,
        interrupt_after: Sequence[str] | None = None,
        wait: bool | float = False,
        run_id: str | None = None,
        stop: threading.Event | None = None,
        context: Any = None,
        configurable: Mapping[str, Any] | None = None,
        rerun_tool_calls: bool = False,
    ) -> AsyncIterator[Any]:
        """`stream` for async code: the same items, the same laziness."""
        options = self._options(
            thread_id=thread_id,
            checkpoint_id=checkpoint_id,
            recursion_limit=recursion_limit,
            budget=budget,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            wait=wait,
            run_id=run_id,
            stop=stop,
            rerun_tool_calls=rerun_tool_calls,
            inline_sync=False,
        )
        if config is not None or context is not None or configurable or thread_id is not None:
            self._configure(options, config, context, configurable)
        options, items = self._streaming(options, mode, stream_mode, subgraphs)
        parts = self._astream(input, options)
        return parts if items is None else items.translate(parts)

    @overload
    def stream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        mode: StreamMode | Sequence[StreamMode] | None = None,
        stream_mode: None = None,
        **options: Unpack[StreamKeywords],
    ) -> Iterator[StreamPart]: ...

    @overload
    def stream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        mode: None = None,
        stream_mode: StreamMode | Sequence[StreamMode],
        **options: Unpack[StreamKeywords],
    ) -> Iterator[Any]: ...

    def stream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        mode: StreamMode | Sequence[StreamMode] | None = None,
        stream_mode: StreamMode | Sequence[StreamMode] | None = None,
        subgraphs: bool = False,
        thread_id: str | None = None,
        checkpoint_id: str | None = None,
        recursion_limit: int = 100,
        budget: Budget | None = None,
        interrupt_before: Sequence[str] | None = None,
        interrupt_after: Sequence[str] | None = None,
        wait: bool | float = False,
        run_id: str | None = None,
        stop: threading.Event | None = None,
        context: Any = None,
        configurable: Mapping[str, Any] | None = None,
        rerun_tool_calls: bool = False,
    ) -> Iterator[Any]:
        """Run the graph, yielding what happens as it happens, step by step.

        With `mode=` (default "updates"; or a list of modes) each item is a
        `StreamPart(mode, step, node, data, namespace)`; with LangGraph's
        `stream_mode=` each item has LangGraph's shape (a dict per step,
        `(chunk, metadata)` for "messages", `(mode, chunk)` for a list of
        modes, `(namespace, ...)` with `subgraphs=True`). The stream is lazy:
        a step starts only once the reader has taken the items of the steps
        before it, and breaking out of the loop stops the run. `config`,
        `context` and `configurable` as for `invoke`.
        """
        options = self._options(
            thread_id=thread_id,
            checkpoint_id=checkpoint_id,
            recursion_limit=recursion_limit,
            budget=budget,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            wait=wait,
            run_id=run_id,
            stop=stop,
            rerun_tool_calls=rerun_tool_calls,
            inline_sync=False,  # sync nodes in threads, so parts reach the caller as they happen
        )
        if config is not None or context is not None or configurable or thread_id is not None:
            self._configure(options, config, context, configurable)
        closed = threading.Event()
        options, items = self._streaming(
            replace(options, closed=closed), mode, stream_mode, subgraphs
        )
        parts = self._astream(input, options)
        return iterate_sync(parts if items is None else items.translate(parts), on_close=closed.set)

    def with_checkpointer(self, checkpointer: BaseCheckpointer | None) -> CompiledGraph:
        """A copy of this app that keeps its threads in `checkpointer` instead.

        The structure and settings are shared; the thread cache and the
        one-run-per-thread bookkeeping are the copy's own, since they
        describe a store. The CLI runs a user's app against its own store.
        """
        other = copy.copy(self)
        other.checkpointer = checkpointer
        other._cache = ThreadCache() if checkpointer is not None else None
        return other

    def with_store(self, store: Any) -> CompiledGraph:
        """A copy of this app whose runs hand `store` to nodes and tools instead.

        The CLI gives an app compiled with a store the one its `--db` names.
        """
        other = copy.copy(self)
        other.store = store
        return other

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Forget the cached results of `nodes` (default: every node with a cache_policy)."""
        if self.cache is None:
            return
        specs = self.spec.nodes  # as added: the namespaces were read from these
        names = [n for n in (nodes if nodes is not None else specs) if n in specs]
        self.cache.clear(
            [namespace_of(specs[n]) for n in names if specs[n].cache_policy is not None]
        )

    # -- as a node of another graph ----------------------------------------------

    def as_node(self, parent: StateAdapter) -> Callable[[Any], Any]:
        """This graph as a node of a graph with state `parent`, sharing same-named fields.

        The subgraph starts from the parent's values of the shared fields and
        reports its writes to them, in order, for the parent's reducers to
        merge: appended lists are not doubled, messages merge by id. A node
        inside that returns `Command(graph=Command.PARENT, goto=..., update=...)`
        stops the subgraph: this node then writes that update and goes there.
        """
        return subgraph_node(self, self.engine, self.store, parent)
