"""CompiledGraph: the runnable app `StateGraph.compile()` returns.

A thin facade: it prepares a `Run` (input applied through the reducers,
first tasks planned) and hands it to the one run loop; the sync methods
bridge to the async ones.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from flowgraph._context import RunUsage, current_task, message_id_factory
from flowgraph._ids import deterministic_id_factory
from flowgraph.errors import InvalidUpdateError
from flowgraph.graph._bridge import iterate_sync, run_sync
from flowgraph.graph._plan import Plan, Task, TaskResult, apply_writes
from flowgraph.graph._runner import Engine, Run, SubgraphWrites, run_loop, start_tasks
from flowgraph.graph._types import START, Budget, StreamMode, StreamPart

if TYPE_CHECKING:
    import networkx as nx

    from flowgraph.graph._builder import StateGraph
    from flowgraph.graph._schema import StateAdapter

__all__ = ["CompiledGraph"]

_MODES = frozenset({"updates", "values", "messages", "events"})
_DONE: Any = object()


def _usage_for(budget: Budget | None) -> RunUsage:
    if budget is None:
        return RunUsage()
    return RunUsage(
        max_model_calls=budget.max_model_calls,
        max_tool_calls=budget.max_tool_calls,
        max_tokens=budget.max_tokens,
    )


def _modes(mode: StreamMode | Sequence[StreamMode]) -> frozenset[str]:
    modes = frozenset([mode] if isinstance(mode, str) else mode)
    unknown = modes - _MODES
    if unknown or not modes:
        raise ValueError(
            f"Unknown stream mode(s) {sorted(unknown)}; use one or more of {sorted(_MODES)}"
        )
    return modes


class CompiledGraph:
    """A validated graph, ready to `invoke`, `stream`, or be used as a node of another graph."""

    def __init__(
        self,
        builder: StateGraph,
        *,
        checkpointer: Any,
        interrupt_before: tuple[str, ...],
        interrupt_after: tuple[str, ...],
        budget: Budget | None,
        name: str,
    ) -> None:
        self.builder = builder
        self.engine = Engine(Plan(builder), builder.state, name)
        self.checkpointer = checkpointer
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.budget = budget
        self.name = name

    @property
    def graph(self) -> nx.MultiDiGraph[str]:
        """The structure: nodes (with `spec` and `kind`) and edges (with `kind`, `label`)."""
        return self.builder.graph

    @property
    def schema(self) -> type[Any]:
        return self.builder.schema

    # -- preparing a run ---------------------------------------------------------

    def _input_writes(self, input: Any) -> dict[str, Any]:
        if isinstance(input, BaseModel):
            return {k: getattr(input, k) for k in input.model_fields_set}
        if isinstance(input, Mapping):
            return dict(input)
        raise InvalidUpdateError(
            f"invoke() takes a dict of state fields (or a {self.engine.state.schema.__name__}), "
            f"not {type(input).__name__}",
            node=START,
        )

    async def _prepare(
        self,
        input: Any,
        *,
        thread_id: str | None,
        recursion_limit: int,
        budget: Budget | None,
        inline_sync: bool,
        sink: Callable[[StreamPart], None] | None = None,
        modes: frozenset[str] = frozenset(),
    ) -> Run:
        state = self.engine.state
        run = Run(
            values=state.defaults(),
            tasks=[],
            scope=thread_id if thread_id is not None else uuid.uuid4().hex,
            usage=_usage_for(budget if budget is not None else self.budget),
            recursion_limit=recursion_limit,
            sink=sink,
            modes=modes,
            inline_sync=inline_sync,
        )
        if input is None:
            raise InvalidUpdateError(
                "invoke(None) resumes a thread, which needs a checkpointer and a thread_id; "
                "pass an input dict to start a run",
                node=START,
            )
        token = message_id_factory.set(deterministic_id_factory(run.scope, 0, START, 0))
        try:
            writes = state.check_update(START, self._input_writes(input))
        finally:
            message_id_factory.reset(token)
        run.values = apply_writes(
            state,
            run.values,
            [TaskResult(Task(START), list(writes.items()))],
            scope=run.scope,
            step=0,
        )
        missing = state.missing_required(run.values)
        if missing:
            raise InvalidUpdateError(
                f"The input leaves required field(s) {', '.join(missing)} of "
                f"{state.schema.__name__} unset; pass them to invoke() or give them defaults",
                node=START,
                key=missing[0],
            )
        if sink is not None and "values" in modes:
            sink(StreamPart("values", 0, None, state.view(run.values)))
        await start_tasks(self.engine, run, START)
        return run

    # -- running -----------------------------------------------------------------

    async def _invoke(
        self,
        input: Any,
        *,
        thread_id: str | None,
        recursion_limit: int,
        budget: Budget | None,
        inline_sync: bool,
    ) -> Any:
        run = await self._prepare(
            input,
            thread_id=thread_id,
            recursion_limit=recursion_limit,
            budget=budget,
            inline_sync=inline_sync,
        )
        await run_loop(self.engine, run)
        return self.engine.state.view(run.values)

    async def ainvoke(
        self,
        input: Any,
        *,
        thread_id: str | None = None,
        recursion_limit: int = 100,
        budget: Budget | None = None,
    ) -> Any:
        """Run the graph to the end and return the final state (in the schema's type)."""
        return await self._invoke(
            input,
            thread_id=thread_id,
            recursion_limit=recursion_limit,
            budget=budget,
            inline_sync=False,
        )

    def invoke(
        self,
        input: Any,
        *,
        thread_id: str | None = None,
        recursion_limit: int = 100,
        budget: Budget | None = None,
    ) -> Any:
        """Run the graph to the end and return the final state (in the schema's type)."""
        return run_sync(
            self._invoke(
                input,
                thread_id=thread_id,
                recursion_limit=recursion_limit,
                budget=budget,
                inline_sync=True,
            )
        )

    async def _astream(
        self,
        input: Any,
        *,
        mode: StreamMode | Sequence[StreamMode],
        thread_id: str | None,
        recursion_limit: int,
        budget: Budget | None,
        inline_sync: bool,
    ) -> AsyncIterator[StreamPart]:
        modes = _modes(mode)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        loop_thread = threading.get_ident()

        def sink(part: StreamPart) -> None:
            if threading.get_ident() == loop_thread:
                queue.put_nowait(part)
            else:  # a sync node streaming tokens from its worker thread
                loop.call_soon_threadsafe(queue.put_nowait, part)

        run = await self._prepare(
            input,
            thread_id=thread_id,
            recursion_limit=recursion_limit,
            budget=budget,
            inline_sync=inline_sync,
            sink=sink,
            modes=modes,
        )
        while not queue.empty():
            yield queue.get_nowait()
        runner = asyncio.create_task(run_loop(self.engine, run))
        runner.add_done_callback(lambda _: queue.put_nowait(_DONE))
        try:
            while (part := await queue.get()) is not _DONE:
                yield part
            await runner
        finally:
            if not runner.done():
                runner.cancel()
                with suppress(asyncio.CancelledError):
                    await runner

    def astream(
        self,
        input: Any,
        *,
        mode: StreamMode | Sequence[StreamMode] = "updates",
        thread_id: str | None = None,
        recursion_limit: int = 100,
        budget: Budget | None = None,
    ) -> AsyncIterator[StreamPart]:
        """Run the graph, yielding `StreamPart`s of the requested mode(s) as they happen."""
        return self._astream(
            input,
            mode=mode,
            thread_id=thread_id,
            recursion_limit=recursion_limit,
            budget=budget,
            inline_sync=False,
        )

    def stream(
        self,
        input: Any,
        *,
        mode: StreamMode | Sequence[StreamMode] = "updates",
        thread_id: str | None = None,
        recursion_limit: int = 100,
        budget: Budget | None = None,
    ) -> Iterator[StreamPart]:
        """Run the graph, yielding `StreamPart`s of the requested mode(s) as they happen."""
        return iterate_sync(
            self._astream(
                input,
                mode=mode,
                thread_id=thread_id,
                recursion_limit=recursion_limit,
                budget=budget,
                inline_sync=True,
            )
        )

    # -- as a node of another graph ----------------------------------------------

    def as_node(self, parent: StateAdapter) -> Callable[[Any], Any]:
        """This graph as a node of a graph with state `parent`, sharing same-named fields.

        The subgraph starts from the parent's values of the shared fields and
        reports its writes to them, in order, for the parent's reducers to
        merge: appended lists are not doubled, messages merge by id.
        """
        engine = self.engine
        shared = [key for key in engine.state.reducers if key in parent.reducers]

        async def subgraph(state: Any) -> SubgraphWrites:
            outer = state.__dict__ if isinstance(state, BaseModel) else state
            scope = current_task.get()
            values = engine.state.defaults()
            values.update({key: outer[key] for key in shared if key in outer})
            emit = scope.emit if scope is not None else None
            run = Run(
                values=values,
                tasks=[],
                scope=(
                    f"{scope.run_scope}/{scope.step}/{scope.node}/{scope.task_index}"
                    if scope is not None
                    else uuid.uuid4().hex
                ),
                usage=scope.usage if scope is not None else RunUsage(),
                sink=(lambda part: emit(part.mode, part.data)) if emit is not None else None,
                modes=frozenset({"messages"}),
                write_log=[],
            )
            await start_tasks(engine, run, START)
            await run_loop(engine, run)
            assert run.write_log is not None
            return SubgraphWrites((k, v) for k, v in run.write_log if k in parent.reducers)

        subgraph.node_kind = "subgraph"  # type: ignore[attr-defined]
        subgraph.subgraph = self  # type: ignore[attr-defined]
        return subgraph
