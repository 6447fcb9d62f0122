"""CompiledGraph: the runnable app `StateGraph.compile()` returns.

A thin facade: `_engine.setup.prepare_run` turns the call into a ready `Run`, the
one run loop executes it; the sync methods bridge to the async ones, and
the state API reads and writes the thread's checkpoints.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import (
    AsyncIterator,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Generic, Literal, Self, overload

from typing_extensions import TypeVar

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.graph._calls import RunCalls, v3_modes
from flowgraph.graph._core.caching import BaseCache
from flowgraph.graph._core.types import (
    Budget,
    StreamMode,
    StreamPart,
)
from flowgraph.graph._diagrams import Diagrams
from flowgraph.graph._engine.bridge import iterate_sync, run_sync
from flowgraph.graph._engine.cache import cached_nodes, namespace_of
from flowgraph.graph._engine.run import Engine, Run
from flowgraph.graph._engine.setup import RunOptions
from flowgraph.graph._engine.subgraph import subgraph_node
from flowgraph.graph._engine.superstep import Plan
from flowgraph.graph._events import AsyncRunStream, RunStream
from flowgraph.graph._items import StreamVersion
from flowgraph.graph._streams import (
    GraphOutput,
    Invoked,
    RunKeywords,
    StreamKeywords,
    stream_parts,
    stream_settings,
)
from flowgraph.graph._thread.replay import ThreadCache
from flowgraph.graph._thread_api import ThreadAPI

if TYPE_CHECKING:
    import networkx as nx
    from typing_extensions import Unpack

    from flowgraph.graph._core.schema import StateAdapter
    from flowgraph.graph._core.spec import GraphSpec

__all__ = ["CompiledGraph"]

_ChunkModes = Literal["updates", "messages", "custom", "events"] | Sequence[StreamMode]
"""The `stream_mode`s for which `invoke` returns the list of the stream's items."""

# LangGraph's order and defaults: a bare `CompiledGraph` hint is valid under --strict (all
# Any), and `CompiledGraph[State]` is a graph over State that returns State.
StateT = TypeVar("StateT", default=Any)
ContextT = TypeVar("ContextT", default=None)
InputT = TypeVar("InputT", default=StateT)
OutputT = TypeVar("OutputT", default=StateT)


class CompiledGraph(RunCalls, ThreadAPI, Diagrams, Generic[StateT, ContextT, InputT, OutputT]):
    """A validated graph, ready to `invoke`, `stream`, or be used as a node of another graph.

    Typed by what `StateGraph(...)` was given: `StateT` the state schema (what
    `stream(stream_mode="values")` yields), `ContextT` the context schema,
    `InputT` the input schema and `OutputT` the output schema (what `invoke`
    returns; the state schema when there is none).
    """

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

    # -- running -----------------------------------------------------------------

    @overload
    async def ainvoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        stream_mode: Literal["values"] = "values",
        version: Literal["v1"] = "v1",
        **options: Unpack[RunKeywords],
    ) -> OutputT: ...

    @overload
    async def ainvoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        stream_mode: Literal["values"] = "values",
        version: Literal["v2"],
        **options: Unpack[RunKeywords],
    ) -> GraphOutput[OutputT]: ...

    @overload
    async def ainvoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        stream_mode: _ChunkModes,
        version: StreamVersion = "v1",
        **options: Unpack[RunKeywords],
    ) -> list[Any]: ...

    @overload
    async def ainvoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        stream_mode: StreamMode | Sequence[StreamMode] = "values",
        version: StreamVersion = "v1",
        **options: Unpack[RunKeywords],
    ) -> Any: ...

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
        stream_mode: StreamMode | Sequence[StreamMode] = "values",
        version: StreamVersion = "v1",
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
        self._configure(options, config, context, configurable)
        invoked = Invoked(stream_mode, version)
        if invoked.chunks:
            options = replace(options, inline_sync=False)
            return [i async for i in self._parts(input, options, None, stream_mode, False, version)]
        return self._returned(invoked, await self._run(input, options))

    @overload
    def invoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        stream_mode: Literal["values"] = "values",
        version: Literal["v1"] = "v1",
        **options: Unpack[RunKeywords],
    ) -> OutputT: ...

    @overload
    def invoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        stream_mode: Literal["values"] = "values",
        version: Literal["v2"],
        **options: Unpack[RunKeywords],
    ) -> GraphOutput[OutputT]: ...

    @overload
    def invoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        stream_mode: _ChunkModes,
        version: StreamVersion = "v1",
        **options: Unpack[RunKeywords],
    ) -> list[Any]: ...

    @overload
    def invoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        stream_mode: StreamMode | Sequence[StreamMode] = "values",
        version: StreamVersion = "v1",
        **options: Unpack[RunKeywords],
    ) -> Any: ...

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
        stream_mode: StreamMode | Sequence[StreamMode] = "values",
        version: StreamVersion = "v1",
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
        `"__interrupt__"` (see `with_interrupts`). As in LangGraph,
        `version="v2"` returns a `GraphOutput` (`.value`, `.interrupts`)
        instead, and a `stream_mode` other than "values" the list of the
        items `stream()` would yield.
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
        self._configure(options, config, context, configurable)
        invoked = Invoked(stream_mode, version)
        if invoked.chunks:  # LangGraph's list of the stream's items
            closed = threading.Event()
            options = replace(options, inline_sync=False, closed=closed)
            parts = self._parts(input, options, None, stream_mode, False, version)
            return list(iterate_sync(parts, on_close=closed.set))
        run = run_sync(self._run(input, options), direct=self.engine.plan.all_sync)
        return self._returned(invoked, run)

    def _parts(
        self,
        input: Any,
        options: RunOptions,
        mode: StreamMode | Sequence[StreamMode] | None,
        stream_mode: StreamMode | Sequence[StreamMode] | None,
        subgraphs: bool,
        version: StreamVersion,
    ) -> AsyncIterator[Any]:
        """The run's parts (`mode=`), or LangGraph's items (see `_streams.stream_settings`)."""
        options, items = stream_settings(options, mode, stream_mode, subgraphs, version)

        def start(shaped: RunOptions) -> Coroutine[Any, Any, Run]:
            return self._run(input, shaped)

        if items is None:
            return stream_parts(start, options)
        return items.translate(stream_parts(start, options))

    @overload
    def astream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        mode: StreamMode | Sequence[StreamMode],
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
        stream_mode: Literal["values"],
        subgraphs: Literal[False] = False,
        version: Literal["v1"] = "v1",
        **options: Unpack[RunKeywords],
    ) -> AsyncIterator[StateT | dict[str, Any]]: ...

    @overload
    def astream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        mode: None = None,
        stream_mode: StreamMode | Sequence[StreamMode] | None = None,
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
        version: StreamVersion = "v1",
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
        self._configure(options, config, context, configurable)
        return self._parts(input, options, mode, stream_mode, subgraphs, version)

    @overload
    def stream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        mode: StreamMode | Sequence[StreamMode],
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
        stream_mode: Literal["values"],
        subgraphs: Literal[False] = False,
        version: Literal["v1"] = "v1",
        **options: Unpack[RunKeywords],
    ) -> Iterator[StateT | dict[str, Any]]: ...

    @overload
    def stream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        mode: None = None,
        stream_mode: StreamMode | Sequence[StreamMode] | None = None,
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
        version: StreamVersion = "v1",
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

        Called as LangGraph code calls it (no `mode=`), each item has
        LangGraph's shape: with its `stream_mode=` (default "updates") a dict
        per step, `(chunk, metadata)` for "messages", `(mode, chunk)` for a
        list of modes, `(namespace, ...)` with `subgraphs=True`, and with
        `version="v2"` its typed parts `{"type", "ns", "data"}`. With
        flowgraph's `mode=` (one mode or a list) each item is a
        `StreamPart(mode, step, node, data, namespace)`. The stream is lazy:
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
        self._configure(options, config, context, configurable)
        closed = threading.Event()
        options = replace(options, closed=closed)
        parts = self._parts(input, options, mode, stream_mode, subgraphs, version)
        return iterate_sync(parts, on_close=closed.set)

    def stream_events(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        version: str = "v3",
        **options: Any,
    ) -> RunStream:
        """LangGraph 1.2's `stream_events(..., version="v3")`: a run read by projections.

        `run.values`, `run.messages` (one stream per model reply, with its
        `.text` tokens), `run.subgraphs`, and `run.output`, `run.interrupted`,
        `run.interrupts`; see `_events.RunStream`. The other keywords are
        `stream`'s.
        """
        modes = v3_modes(version, options)
        parts = self.stream(input, config, mode=modes, subgraphs=True, **options)
        stream: RunStream = RunStream.start(parts)
        return stream

    async def astream_events(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        version: str = "v3",
        **options: Any,
    ) -> AsyncRunStream:
        """`stream_events` for async code: `run = await app.astream_events(..., version="v3")`,
        then `async for` over its projections and `await run.output()`."""
        modes = v3_modes(version, options)
        parts = self.astream(input, config, mode=modes, subgraphs=True, **options)
        stream: AsyncRunStream = AsyncRunStream.start(parts)
        return stream

    def with_checkpointer(self, checkpointer: BaseCheckpointer | None) -> Self:
        """A copy of this app that keeps its threads in `checkpointer` instead.

        The structure and settings are shared; the thread cache and the
        one-run-per-thread bookkeeping are the copy's own, since they
        describe a store. The CLI runs a user's app against its own store.
        """
        other = copy.copy(self)
        other.checkpointer = checkpointer
        other._cache = ThreadCache() if checkpointer is not None else None
        return other

    def with_store(self, store: Any) -> Self:
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
