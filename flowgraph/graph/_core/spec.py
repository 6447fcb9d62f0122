"""The frozen description of a compiled graph: what the engine reads, never the builder.

`StateGraph.compile()` freezes its definition into a `GraphSpec` (the node
specs, the plain edges, the branches, the join edges, the state schema);
the superstep rules and the run loop read that, so the engine depends on
no builder and a graph changed after `compile()` does not change the app.
A step's `Task`s and their `TaskResult`s are here too: the record of a
step stores them and the engine makes them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flowgraph.graph._core.types import MISSING, RetryPolicy, Send

if TYPE_CHECKING:
    from flowgraph.graph._core.caching import CachePolicy
    from flowgraph.graph._core.schema import StateAdapter

__all__ = ["Branch", "GraphSpec", "NodeSpec", "Task", "TaskResult"]


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """A node as the engine runs it."""

    name: str
    fn: Callable[..., Any]
    is_async: bool
    retries: tuple[RetryPolicy, ...] = ()
    """Its retry policies (LangGraph's `retry_policy=[p1, p2]`): the first that takes an
    error applies to it, counting the node's attempts so far."""
    destinations: tuple[str, ...] = ()
    kind: str = "function"
    """For diagrams: model, tool, router, persona, subgraph or function."""
    view: Callable[[dict[str, Any]], Any] | None = None
    """How the node sees the state's values (its input type's view); None: the state's."""
    defer: bool = False
    """Run only once no other task is left (see `StateGraph.add_node`)."""
    cache_policy: CachePolicy | None = None
    """Reuse the writes of an earlier call with the same input (see `compile(cache=...)`)."""
    metadata: Mapping[str, Any] | None = None
    """`add_node(..., metadata=...)`: added to the metadata of the node's "messages" stream
    items (and of the nodes of a subgraph it runs), as in LangGraph."""

    @property
    def retry(self) -> RetryPolicy | None:
        """The node's first retry policy (None: a failure is not retried)."""
        return self.retries[0] if self.retries else None

    def retry_for(self, exc: BaseException) -> RetryPolicy | None:
        """The policy that retries `exc`: the first whose `retry_on` takes it, if any."""
        for policy in self.retries:
            if policy.should_retry(exc):
                return policy
        return None


@dataclass(frozen=True, slots=True)
class Branch:
    """A conditional edge: `path(state)` names the next node(s), maybe through `path_map`."""

    source: str
    path: Callable[..., Any]
    path_map: Mapping[Hashable, str] | None
    is_async: bool
    targets: tuple[str, ...] | None = None
    """Every node the branch can lead to, when known (path_map or a Literal hint)."""


@dataclass(slots=True)
class Task:
    """One node to run in a step; `arg` is a Send's argument (MISSING: the node gets the state)."""

    node: str
    index: int = 0
    arg: Any = MISSING


@dataclass(slots=True)
class TaskResult:
    """What a finished task asks for: checked writes in order, and explicit routes."""

    task: Task
    writes: list[tuple[str, Any]] = field(default_factory=list)
    goto: list[str | Send] = field(default_factory=list)
    cached: bool = False
    """Not made by running the node now: a cache hit, or a resumed step's stored writes."""


@dataclass(frozen=True, slots=True)
class GraphSpec:
    """A compiled graph's structure and state schema, as the engine runs it."""

    nodes: Mapping[str, NodeSpec]
    """The user's nodes by name (START and END excluded), in the order they were named."""
    edges: tuple[tuple[str, str], ...]
    """Plain edges, in the order they were added."""
    branches: tuple[Branch, ...]
    joins: tuple[tuple[frozenset[str], str], ...]
    """Join edges: the target runs once every source has run."""
    successors: Mapping[str, tuple[str, ...]]
    """Every edge's target by source (any kind of edge; one entry per edge)."""
    state: StateAdapter
    schema: type[Any]
    context_schema: type[Any] | None = None
