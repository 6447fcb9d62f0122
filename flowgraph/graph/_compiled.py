"""CompiledGraph: the runnable app `StateGraph.compile()` returns.

A thin facade: `_start.prepare_run` turns the call into a ready `Run`, the
one run loop executes it; the sync methods bridge to the async ones, and
the state API reads and writes the thread's checkpoints.
"""

from __future__ import annotations

import asyncio
import copy
import threading
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import suppress
from contextvars import Token
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypedDict, overload

from pydantic import BaseModel

import flowgraph._hooks as _hooks
from flowgraph._context import (
    RunUsage,
    bind_store,
    current_run,
    current_store,
    current_task,
)
from flowgraph._ids import random_scope_key, scope_key
from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.errors import ConcurrentRunError
from flowgraph.graph._bridge import iterate_sync, run_sync
from flowgraph.graph._cache import BaseCache, cached_nodes, namespace_of
from flowgraph.graph._config import read_config
from flowgraph.graph._interrupt import GraphInterrupt, Pause, with_interrupts
from flowgraph.graph._items import LangGraphItems
from flowgraph.graph._lease import (
    LeaseHeld,
    RunLease,
    claim,
    claim_taken,
    drop_claim,
    enter_claim,
    release,
)
from flowgraph.graph._persist import (
    ThreadCache,
)
from flowgraph.graph._plan import Plan
from flowgraph.graph._runner import (
    Emitter,
    Engine,
    Run,
    SubgraphWrites,
    run_loop,
    start_tasks,
)
from flowgraph.graph._start import RunOptions, prepare_run
from flowgraph.graph._thread_api import ThreadAPI
from flowgraph.graph._types import (
    START,
    Budget,
    Command,
    ParentCommand,
    StreamMode,
    StreamPart,
)

if TYPE_CHECKING:
    import os
    from pathlib import Path

    import networkx as nx
    from typing_extensions import Unpack

    from flowgraph.graph._builder import StateGraph
    from flowgraph.graph._schema import StateAdapter

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


def _unbind(tokens: tuple[Token[Any] | None, Token[Any]]) -> None:
    store, run = tokens
    current_run.reset(run)
    if store is not None:
        current_store.reset(store)


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


class CompiledGraph(ThreadAPI):
    """A validated graph, ready to `invoke`, `stream`, or be used as a node of another graph."""

    def __init__(
        self,
        builder: StateGraph,
        *,
        checkpointer: BaseCheckpointer | None,
        interrupt_before: tuple[str, ...],
        interrupt_after: tuple[str, ...],
        budget: Budget | None,
        name: str,
        store: Any = None,
        cache: BaseCache | None = None,
    ) -> None:
        self.builder = builder
        plan = Plan(builder)
        plan.nodes = cached_nodes(plan.nodes, cache)
        remaining = tuple(
            k for k, kind in builder.state.managed.items() if kind == "remaining_steps"
        )
        self.engine = Engine(plan, builder.state, name, remaining)
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
        return self.builder.graph

    @property
    def schema(self) -> type[Any]:
        return self.builder.schema

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
            context_schema=self.builder.context_schema,
        )
        options.thread_id, options.checkpoint_id = call.thread_id, call.checkpoint_id
        options.recursion_limit, options.run_id = call.recursion_limit, call.run_id
        options.info = call.info

    # -- running -----------------------------------------------------------------

    def _direct(self, options: RunOptions) -> bool:
        """Whether this run calls its store from the run loop's own thread."""
        return options.inline_sync or getattr(self.checkpointer, "is_nonblocking", False)

    async def _run(self, input: Any, options: RunOptions) -> Run:
        """One run, watched by the observer (tracing) when one is set."""
        observer = _hooks.observer
        if observer is None:
            return await self._leased_run(input, options)
        seen = observer.run_started(self.name, options.thread_id, options.run_id)
        try:
            run = await self._leased_run(input, options)
        except BaseException as exc:
            seen.end(error=exc)
            raise
        seen.end(run)
        return run

    async def _leased_run(self, input: Any, options: RunOptions) -> Run:
        """One run, holding its thread's lease (if it has a thread) from start to end.

        The run's store and config reach its nodes through context variables,
        set here only when there is something to set (or an outer run's to hide).
        """
        bound = None
        if self.store is not None or options.info is not None or current_run.get() is not None:
            bound = self._bind(options)
        try:
            checkpointer = self.checkpointer
            if checkpointer is None or options.thread_id is None:
                run = await prepare_run(self.engine, checkpointer, input, options, self._cache)
                await run_loop(self.engine, run)
                return run
            direct = self._direct(options)
            claimed = None
            if options.run_id is None:
                options.run_id = uuid.uuid4().hex
                if self._input_claims(checkpointer, input, options):
                    claimed = await self._claiming_run(checkpointer, input, options, direct)
            if claimed is not None:
                run, lease = claimed
            else:
                lease = await claim(
                    checkpointer,
                    options.thread_id,
                    options.run_id,
                    wait=options.wait,
                    direct=direct,
                )
            try:
                if claimed is None:
                    run = await prepare_run(self.engine, checkpointer, input, options, self._cache)
                    run.lease = lease
                await run_loop(self.engine, run)
                return run
            finally:
                await release(lease, direct=direct)
        finally:
            if bound is not None:
                _unbind(bound)

    def _input_claims(
        self, checkpointer: BaseCheckpointer, input: Any, options: RunOptions
    ) -> bool:
        """Whether the run's input write may take the thread's lease with it.

        Only a fresh input (no resume, Command, fork, or caller's run id that a
        retried delivery could reuse) on a store that makes it one write, and
        only when no code of the graph runs before that write (no branch from
        START): the state is read before the lease is held, which the write's
        compare-and-set on the head makes safe.
        """
        return (
            input is not None
            and not isinstance(input, Command)
            and options.checkpoint_id is None
            and START not in self.engine.plan.branches
            and checkpointer.writes_leases_with_steps("_put_and_acquire")
        )

    async def _claiming_run(
        self, checkpointer: BaseCheckpointer, input: Any, options: RunOptions, direct: bool
    ) -> tuple[Run, RunLease] | None:
        """`prepare_run` whose input write takes the lease: one store write, not two.

        None when the thread turned out busy, or its head moved between this
        run's read and its write (nothing was stored): the run then claims the
        thread first, as any other does.
        """
        assert options.thread_id is not None and options.run_id is not None
        lease = enter_claim(checkpointer, options.thread_id, options.run_id)
        if lease is None:
            return None
        try:
            run = await prepare_run(
                self.engine, checkpointer, input, options, self._cache, claim=lease
            )
        except (LeaseHeld, ConcurrentRunError):
            drop_claim(lease, stored=False)
            return None
        except BaseException:
            drop_claim(lease, stored=True)
            raise
        if run.saver is None or run.saver.claim is not None:  # no write took it: should not be
            drop_claim(lease, stored=False)
            return None
        claim_taken(lease)
        run.lease = lease
        return run, lease

    def _bind(self, options: RunOptions) -> tuple[Token[Any] | None, Token[Any]]:
        """Make this run's store and config the ones its nodes and tools see."""
        store = bind_store(self.store) if self.store is not None else None
        return store, current_run.set(options.info)

    async def _invoke(self, input: Any, options: RunOptions) -> Any:
        run = await self._run(input, options)
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
        return await self._invoke(input, options)

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
        return run_sync(self._invoke(input, options), direct=self.engine.plan.all_sync)

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
        specs = self.builder.nodes  # as added: the namespaces were read from these
        names = [n for n in (nodes if nodes is not None else specs) if n in specs]
        self.cache.clear(
            [namespace_of(specs[n]) for n in names if specs[n].cache_policy is not None]
        )

    # -- diagrams (drawn by flowgraph.viz, reached through a hook) --------------------

    def to_mermaid(self, *, thread_id: str | None = None) -> str:
        """A Mermaid flowchart; with `thread_id`, the path that thread took is highlighted."""
        from flowgraph.graph._diagrams import diagram_functions

        return diagram_functions().to_mermaid(self, thread_id)

    def to_dot(self, *, thread_id: str | None = None) -> str:
        """Graphviz DOT source; with `thread_id`, the path that thread took is highlighted."""
        from flowgraph.graph._diagrams import diagram_functions

        return diagram_functions().to_dot(self, thread_id)

    def to_ascii(self) -> str:
        """Boxes and arrows for a terminal (at most 80 columns where names allow)."""
        from flowgraph.graph._diagrams import diagram_functions

        return diagram_functions().to_ascii(self)

    def to_mermaid_sequence(self, thread_id: str) -> str:
        """The thread's conversation as a Mermaid sequence diagram (user, model, tools)."""
        from flowgraph.graph._diagrams import diagram_functions

        return diagram_functions().to_mermaid_sequence(self, thread_id)

    def render(
        self,
        path: str | os.PathLike[str],
        *,
        thread_id: str | None = None,
        engine: str = "auto",
    ) -> Path:
        """Write the diagram to `path` (.svg, .png, .html, .mmd, .dot); returns the path."""
        from flowgraph.graph._diagrams import diagram_functions

        return diagram_functions().render(self, path, thread_id, engine)

    # -- as a node of another graph ----------------------------------------------

    def as_node(self, parent: StateAdapter) -> Callable[[Any], Any]:
        """This graph as a node of a graph with state `parent`, sharing same-named fields.

        The subgraph starts from the parent's values of the shared fields and
        reports its writes to them, in order, for the parent's reducers to
        merge: appended lists are not doubled, messages merge by id. A node
        inside that returns `Command(graph=Command.PARENT, goto=..., update=...)`
        stops the subgraph: this node then writes that update and goes there.
        """
        engine = self.engine

        async def subgraph(state: Any) -> SubgraphWrites | Command[Any]:
            outer = state.__dict__ if isinstance(state, BaseModel) else state
            scope = current_task.get()
            values = engine.state.defaults()
            # the parent's state (shared fields), or a Send's argument (any child field)
            given = {k: v for k, v in outer.items() if k in engine.state.reducers}
            values.update(given)
            run = Run(
                values=values,
                tasks=[],
                scope=(
                    scope_key(scope.run_scope, scope.step, scope.task_index)
                    if scope is not None
                    else random_scope_key()
                ),
                usage=scope.usage if scope is not None else RunUsage(),
                write_log=[],
                parent_task=scope,
            )
            if scope is not None and isinstance(scope.emit, Emitter):
                _stream_from(run, scope.emit, f"{scope.node}:{run.scope}")
                if run.subgraphs and "values" in run.modes and given and run.sink is not None:
                    # the subgraph's own first values, as LangGraph streams them
                    run.sink(StreamPart("values", 0, None, engine.state.view(run.values)))
            # a subgraph compiled with a store of its own gives its nodes that one
            own_store = bind_store(self.store) if self.store is not None else None
            try:
                await start_tasks(engine, run, START)
                await run_loop(engine, run)
            except ParentCommand as handoff:
                # a node inside handed off to this graph's nodes: this node writes its update
                # and goes where it says; the subgraph's own writes stay behind, as in LangGraph
                return handoff.command
            except GraphInterrupt as paused:
                if scope is None:
                    raise
                # the pauses become this node's, named by their path ("review/ask")
                raise GraphInterrupt(
                    [
                        Pause(replace(p.interrupt, node=f"{scope.node}/{p.interrupt.node}"), p.key)
                        for p in paused.pauses
                    ]
                ) from None
            finally:
                if own_store is not None:
                    current_store.reset(own_store)
            assert run.write_log is not None
            return SubgraphWrites((k, v) for k, v in run.write_log if k in parent.reducers)

        subgraph.node_kind = "subgraph"  # type: ignore[attr-defined]
        subgraph.subgraph = self  # type: ignore[attr-defined]
        return subgraph


def _stream_from(run: Run, outer: Emitter, segment: str) -> None:
    """Connect a subgraph node's run to the stream of the run that called it.

    With `subgraphs=True` every part of the subgraph's steps goes up, its
    namespace starting with `segment` ("node:task id"); otherwise only the
    modes the caller lets through (`passed_up`), as the node's own parts.
    """
    caller = outer.run
    run.subgraphs = caller.subgraphs
    run.passed_up = caller.passed_up
    if caller.subgraphs:
        sink = outer.sink
        run.modes = caller.modes
        run.sink = lambda part: sink(part.nested(segment))
    else:
        run.modes = caller.modes & caller.passed_up
        if run.modes:
            run.sink = lambda part: outer(part.mode, part.data)
