"""The pure superstep algorithm: merge a step's writes, then decide the next step's tasks.

No I/O and no concurrency here: at every step barrier the run loop merges
the step's writes (`apply_writes`, in `_core.merge`: reading a checkpoint
replays writes with it too) and then asks `next_tasks` what runs next, so
the rules of a superstep can be read (and tested) in two functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from flowgraph.errors import GraphValidationError
from flowgraph.graph._core.merge import apply_writes
from flowgraph.graph._core.spec import Task, TaskResult
from flowgraph.graph._core.types import END, MISSING, Send

if TYPE_CHECKING:
    from flowgraph.graph._core.spec import Branch, GraphSpec

__all__ = ["Plan", "Task", "TaskResult", "apply_writes", "next_tasks"]


class Plan:
    """The graph's structure indexed for the run loop: successors, branches and joins per node."""

    __slots__ = (
        "all_sync",
        "branches",
        "deferred",
        "joins",
        "joins_by_source",
        "nodes",
        "successors",
    )

    def __init__(self, spec: GraphSpec) -> None:
        self.nodes = dict(spec.nodes)
        self.all_sync = not any(
            spec.is_async and not getattr(spec.fn, "runs_without_task", False)
            for spec in self.nodes.values()
        ) and not any(branch.is_async for branch in spec.branches)
        """No node or branch runs user async code (a ToolNode of sync tools is async only in
        flowgraph's code): a sync run may step the loop by hand (`run_sync`)."""
        successors: dict[str, list[str]] = {}
        for a, b in spec.edges:
            successors.setdefault(a, []).append(b)
        self.successors = {k: tuple(v) for k, v in successors.items()}
        branches: dict[str, list[Branch]] = {}
        for branch in spec.branches:
            branches.setdefault(branch.source, []).append(branch)
        self.branches = {k: tuple(v) for k, v in branches.items()}
        self.joins = list(spec.joins)
        joins_by_source: dict[str, list[int]] = {}
        for i, (sources, _) in enumerate(self.joins):
            for source in sources:
                joins_by_source.setdefault(source, []).append(i)
        self.joins_by_source = {k: tuple(v) for k, v in joins_by_source.items()}
        deferred = [name for name, spec in self.nodes.items() if spec.defer]
        self.deferred = {name: _deferred_key(i) for i, name in enumerate(deferred)}
        """Nodes added with defer=True, each with the `join_seen` key that marks it waiting."""


def _deferred_key(position: int) -> int:
    """A deferred node's key in `join_seen`: negative, since join edges count up from 0."""
    return -1 - position


def next_tasks(
    plan: Plan, routes: Sequence[tuple[str, Sequence[str | Send]]], join_seen: dict[int, set[str]]
) -> list[Task]:
    """The next step's tasks, in the order their triggers were produced.

    A node triggered several times runs once; every `Send` is its own task.
    `join_seen` (updated in place, and checkpointed with the step) remembers
    which sources of each join edge have finished since its target last
    ran, and which deferred nodes were triggered and are still waiting.
    """
    tasks = _triggered(plan, routes, join_seen)
    if plan.deferred:
        return _hold_deferred(plan, tasks, join_seen)
    return tasks


def _hold_deferred(plan: Plan, tasks: list[Task], join_seen: dict[int, set[str]]) -> list[Task]:
    """Deferred nodes wait while other tasks remain; once none do, the waiting ones run.

    A deferred node triggered several times before it runs, runs once.
    """
    deferred = plan.deferred
    held = [t for t in tasks if t.arg is MISSING and t.node in deferred]
    if not held and not any(deferred[n] in join_seen for n in deferred):
        return tasks
    others = [t for t in tasks if not (t.arg is MISSING and t.node in deferred)]
    for task in held:
        join_seen.setdefault(deferred[task.node], set()).add(task.node)
    if others:
        for i, task in enumerate(others):
            task.index = i
        return others
    ready = [name for name, key in deferred.items() if join_seen.pop(key, None) is not None]
    return [Task(name, i) for i, name in enumerate(ready)]


def _triggered(
    plan: Plan, routes: Sequence[tuple[str, Sequence[str | Send]]], join_seen: dict[int, set[str]]
) -> list[Task]:
    """Every task the routes and completed joins ask for (deferred ones included)."""
    tasks: list[Task] = []
    scheduled: set[str] = set()
    nodes = plan.nodes
    joins_by_source = plan.joins_by_source
    for source, targets in routes:
        for target in targets:
            if type(target) is str:  # a node name: the common case, scheduled here
                if target != END and target not in scheduled:
                    if target not in nodes:
                        raise _not_a_node(nodes, source, target)
                    scheduled.add(target)
                    tasks.append(Task(target, len(tasks)))
            elif isinstance(target, Send):
                if target.node not in nodes:
                    raise GraphValidationError(
                        f"Node '{source}' sent to '{target.node}', which is not a node; "
                        f"known nodes: {', '.join(sorted(nodes))}",
                        node=source,
                    )
                tasks.append(Task(target.node, len(tasks), target.arg))
            else:
                _schedule(tasks, scheduled, nodes, source, target)
        if not joins_by_source:  # most graphs have no join edges: skip the lookup
            continue
        for join in joins_by_source.get(source, ()):
            sources, target_node = plan.joins[join]
            seen = join_seen.setdefault(join, set())
            seen.add(source)
            if seen >= sources:
                del join_seen[join]
                _schedule(tasks, scheduled, nodes, source, target_node)
    return tasks


def _schedule(
    tasks: list[Task], scheduled: set[str], nodes: Mapping[str, Any], source: str, target: str
) -> None:
    """Add a task for node `target` unless it is END or already scheduled this step.

    A str subclass (a StrEnum route) becomes the plain name: the task is checkpointed,
    and the codec stores str, not the user's enum.
    """
    if target == END or target in scheduled:
        return
    if target not in nodes:
        raise _not_a_node(nodes, source, target)
    name = str.__str__(target)
    scheduled.add(name)
    tasks.append(Task(name, len(tasks)))


def _not_a_node(nodes: Mapping[str, Any], source: str, target: str) -> GraphValidationError:
    return GraphValidationError(
        f"Node '{source}' routed to '{target}', which is not a node; "
        f"known nodes: {', '.join(sorted(nodes))} (or END)",
        node=source,
    )
