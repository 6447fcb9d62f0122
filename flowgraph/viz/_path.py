"""The path a thread took through its graph, read from its checkpoints.

Every checkpoint's metadata names the nodes that ran in its step (one entry
per task, so a node fanned out to three times by `Send` appears three times)
and its source: "input" (a new run: START), "loop" or "fork" (a step of the
graph; also a forked run's input), "update" (`update_state`). Walking the
head's branch oldest first, a node visit is one task; an edge a -> b counts
as taken once for every task of b in the step right after a step where a
ran, when the graph has an edge a -> b. A run that stopped with nothing left
to do (no next tasks, no interrupt) took the edges into END from its last
step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flowgraph.errors import DiagramError, InvalidUpdateError
from flowgraph.graph import END, START

if TYPE_CHECKING:
    from flowgraph.graph import CompiledGraph, StateSnapshot

__all__ = ["PathStep", "ThreadPath", "thread_path"]

_RUN_SOURCES = frozenset({"loop", "fork"})


@dataclass(frozen=True, slots=True)
class PathStep:
    """One checkpoint of the thread, as the overlay reads it."""

    step: int
    source: str
    nodes: tuple[str, ...]
    finished: bool
    """True when the run stopped here with nothing left to run."""


@dataclass(slots=True)
class ThreadPath:
    """Visit counts and steps per node, and traversal counts per (source, target) edge."""

    thread_id: str
    steps: list[PathStep] = field(default_factory=list)
    visits: dict[str, list[int]] = field(default_factory=dict)
    taken: dict[tuple[str, str], int] = field(default_factory=dict)


def head_branch(app: CompiledGraph, thread_id: str) -> list[StateSnapshot]:
    """The checkpoints from the thread's first to its head, following parent ids."""
    if app.checkpointer is None:
        raise DiagramError(
            f"Cannot draw the path of thread {thread_id!r}: graph {app.name!r} keeps no "
            "history; compile(checkpointer=...) to record threads",
            thread_id=thread_id,
        )
    try:
        history = list(app.get_state_history(thread_id, before_inputs=False))
    except InvalidUpdateError as exc:
        raise DiagramError(f"Cannot draw the path of thread {thread_id!r}: {exc}") from exc
    if not history:
        raise DiagramError(
            f"Thread {thread_id!r} has no checkpoints; run it with "
            f"invoke(..., thread_id={thread_id!r}) before drawing its path",
            thread_id=thread_id,
        )
    by_id = {s.checkpoint_id: s for s in history}
    head = app.get_state(thread_id)
    chain: list[StateSnapshot] = []
    current = by_id.get(head.checkpoint_id)
    while current is not None:
        chain.append(current)
        current = by_id.get(current.parent_id) if current.parent_id else None
    chain.reverse()
    return chain


def thread_path(
    app: CompiledGraph, thread_id: str, edges: Collection[tuple[str, str]] | None = None
) -> ThreadPath:
    """Read `thread_id`'s checkpoints into a `ThreadPath` over `app`'s top-level nodes.

    `edges` are the (source, target) pairs that count as edges (the diagram's,
    which include the Send edges it infers); by default the graph's own.
    """
    graph = app.graph
    edges = set(graph.edges()) if edges is None else set(edges)
    path = ThreadPath(thread_id)
    for snapshot in head_branch(app, thread_id):
        meta = snapshot.metadata or {}
        source = str(meta.get("source", "loop"))
        nodes = tuple(str(n) for n in meta.get("nodes", ()))
        finished = not snapshot.next and not snapshot.interrupts
        path.steps.append(PathStep(snapshot.step, source, nodes, finished))
    taken: Counter[tuple[str, str]] = Counter()
    previous: tuple[str, ...] = ()
    for item in path.steps:
        if item.source == "input" or item.nodes == (START,):  # a new run (maybe a fork)
            ran: tuple[str, ...] = (START,)
            path.visits.setdefault(START, []).append(item.step)
        elif item.source in _RUN_SOURCES:
            ran = tuple(n for n in item.nodes if n in graph)
            for node in ran:
                path.visits.setdefault(node, []).append(item.step)
            counts = Counter(ran)
            for before in dict.fromkeys(previous):
                for after, times in counts.items():
                    if (before, after) in edges:
                        taken[before, after] += times
        else:  # an update: as_node's edges lead on, or nothing ran
            ran = tuple(n for n in item.nodes if n in graph)
        if item.finished and item.source in _RUN_SOURCES:
            path.visits.setdefault(END, []).append(item.step)
            for node in dict.fromkeys(ran):
                if (node, END) in edges:
                    taken[node, END] += 1
        previous = ran
    path.taken = dict(taken)
    return path
