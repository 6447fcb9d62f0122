"""A compiled graph run as a node of another graph (a subgraph), sharing same-named fields.

The subgraph starts from the parent's values of the shared fields, and its
final state (the fields its output schema names) is the node's update,
merged through the parent's reducers as LangGraph merges it: an
`operator.add` list the parent passed in comes back whole and is added
again (`['brief', 'brief', 'researched']`), while messages merge by id, so
the conversation is not doubled. A node inside that
returns `Command(graph=Command.PARENT, goto=..., update=...)` stops the
subgraph: the node then writes that update and goes there. A pause inside
becomes the node's, named by its path ("review/ask"); with `subgraphs=True`
the subgraph's namespace streams its `__interrupt__` first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from flowgraph._context import RunUsage, bind_store, current_store, current_task
from flowgraph._ids import random_scope_key, scope_key
from flowgraph.graph._core.interrupt import GraphInterrupt, Pause
from flowgraph.graph._core.types import START, Command, ParentCommand, StreamPart
from flowgraph.graph._engine.loop import run_loop, start_tasks, stream_pause
from flowgraph.graph._engine.run import Emitter, Engine, Run
from flowgraph.graph._engine.setup import RunOptions

if TYPE_CHECKING:
    from flowgraph.graph._core.schema import StateAdapter

__all__ = ["stream_from_caller", "stream_into", "subgraph_node"]


def subgraph_node(
    app: object, engine: Engine, store: Any, parent: StateAdapter
) -> Callable[[Any], Any]:
    """The node that runs `engine` (the compiled graph `app`) inside a graph with state `parent`."""

    async def subgraph(state: Any) -> dict[str, Any] | Command[Any]:
        outer = _fields(state)
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
            nested=True,
            parent_task=scope,
            metadata=scope.metadata if scope is not None else None,
        )
        if scope is not None and isinstance(scope.emit, Emitter):
            stream_into(run, scope.emit, f"{scope.node}:{run.scope}")
            if run.subgraphs and "values" in run.modes and given and run.sink is not None:
                # the subgraph's own first values, as LangGraph streams them
                run.sink(StreamPart("values", 0, None, engine.state.view(run.values)))
        # a subgraph compiled with a store of its own gives its nodes that one
        own_store = bind_store(store) if store is not None else None
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
            pauses = [
                Pause(replace(p.interrupt, node=f"{scope.node}/{p.interrupt.node}"), p.key)
                for p in paused.pauses
            ]
            if run.subgraphs and run.sink is not None:
                # the subgraph's own stream says it paused, as LangGraph's does, before
                # the graph above says so in its own namespace
                stream_pause(run, [p.interrupt for p in pauses])
            raise GraphInterrupt(pauses) from None
        finally:
            if own_store is not None:
                current_store.reset(own_store)
        final = engine.state.final_values(run.values)
        return {k: v for k, v in final.items() if k in parent.reducers}

    subgraph.node_kind = "subgraph"  # type: ignore[attr-defined]
    subgraph.subgraph = app  # type: ignore[attr-defined]
    return subgraph


def _fields(state: Any) -> Mapping[str, Any]:
    """The parent's state (a dict, a pydantic or a dataclass instance) as a mapping."""
    if isinstance(state, BaseModel):
        return state.__dict__
    if is_dataclass(state):
        return {f.name: getattr(state, f.name) for f in fields(state)}
    return state  # type: ignore[no-any-return]  # a dict (a Send's argument may be any)


def stream_from_caller(options: RunOptions) -> None:
    """A graph invoked inside another graph's node streams into that run, as a subgraph.

    As LangGraph's: with `subgraphs=True` its steps come under the calling task's
    namespace ("node:<task id>", the id a subgraph node of that task would have),
    and without, the modes that pass up (tokens) as the node's own. A call that
    streams itself (`stream()`), or one outside any run, is left alone.
    """
    scope = current_task.get()
    if options.sink is not None or scope is None or not isinstance(scope.emit, Emitter):
        return
    task_id = scope_key(scope.run_scope, scope.step, scope.task_index)
    stream_into(options, scope.emit, f"{scope.node}:{task_id}")


def stream_into(run: Run | RunOptions, outer: Emitter, segment: str) -> None:
    """Connect a subgraph's run (or a nested call's options) to the stream of the run
    that called it.

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
