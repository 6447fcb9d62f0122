"""StateGraph: nodes and edges kept as a networkx MultiDiGraph, compiled into a runnable app.

`g.graph` is the structure as a networkx MultiDiGraph: node attributes
hold a `NodeSpec`; edge attributes say what kind of edge it is (`direct`,
`conditional`, `join`, `command`) and carry a label where a branch has
one. Importing networkx costs more than the rest of a cold start, and
neither running nor validating a graph needs it, so the builder records
the structure as it is added and builds the networkx graph on first use
(then keeps it up to date); validation and the run plan read the record.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin, get_type_hints

from flowgraph.errors import GraphValidationError
from flowgraph.graph._schema import StateAdapter
from flowgraph.graph._types import END, START, Budget, RetryPolicy

if TYPE_CHECKING:
    import networkx as nx

    from flowgraph.graph._compiled import CompiledGraph

__all__ = ["Branch", "NodeSpec", "StateGraph"]

_RESERVED = {START, END}


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """A node as the engine runs it."""

    name: str
    fn: Callable[..., Any]
    is_async: bool
    retry: RetryPolicy | None = None
    destinations: tuple[str, ...] = ()
    kind: str = "function"
    """For diagrams: model, tool, router, persona, subgraph or function."""


@dataclass(frozen=True, slots=True)
class Branch:
    """A conditional edge: `path(state)` names the next node(s), maybe through `path_map`."""

    source: str
    path: Callable[..., Any]
    path_map: Mapping[Hashable, str] | None
    is_async: bool
    targets: tuple[str, ...] | None = None
    """Every node the branch can lead to, when known (path_map or a Literal hint)."""


def _is_async_callable(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - an instance with an async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def _literal_targets(path: Callable[..., Any]) -> tuple[str, ...] | None:
    """Targets named by a `-> Literal["a", "b"]` return hint, if the function has one."""
    target = path if inspect.isfunction(path) or inspect.ismethod(path) else path.__call__  # type: ignore[operator]
    try:
        hint = get_type_hints(target).get("return")
    except Exception:
        return None
    if hint is None:
        return None
    options: list[str] = []
    for part in get_args(hint) if get_origin(hint) is Union else (hint,):
        if get_origin(part) is Literal:
            options.extend(str(a) for a in get_args(part))
        else:
            return None
    return tuple(options) or None


class StateGraph:
    """A graph under construction: add nodes and edges, then `compile()` it.

    >>> g = StateGraph(MessagesState)
    >>> g.add_node("echo", lambda state: {"messages": [("ai", state.messages[-1].text)]})
    >>> g.add_edge(START, "echo").add_edge("echo", END)
    """

    def __init__(self, schema: type[Any]) -> None:
        self.schema = schema
        self.state = StateAdapter(schema)
        self._specs: dict[str, NodeSpec] = {}
        self._mentioned: dict[str, None] = {}
        """Every name a node or an edge used, in first-use order (networkx's node order)."""
        self._successors: dict[str, list[str]] = {}
        """Every edge (of any kind) by source, one entry per edge."""
        self._structure: list[tuple[str, tuple[str, ...], dict[str, Any]]] = []
        """("node", (name,), attributes) and ("edge", (a, b), attributes), in order."""
        self._nx: nx.MultiDiGraph[str] | None = None
        self._add_to_structure("node", (START,), {"kind": "start"})
        self._add_to_structure("node", (END,), {"kind": "end"})
        self.branches: list[Branch] = []
        self.joins: list[tuple[frozenset[str], str]] = []
        self._edges: list[tuple[str, str]] = []

    # -- structure ------------------------------------------------------------

    @property
    def graph(self) -> nx.MultiDiGraph[str]:
        """The structure as a networkx MultiDiGraph (built on first use, then kept current)."""
        if self._nx is None:
            import networkx as nx

            graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
            for what, ends, attributes in self._structure:
                _add_to(graph, what, ends, attributes)
            self._nx = graph
        return self._nx

    def _add_to_structure(
        self, what: str, ends: tuple[str, ...], attributes: dict[str, Any]
    ) -> None:
        self._structure.append((what, ends, attributes))
        for name in ends:
            self._mentioned.setdefault(name, None)
        if what == "edge":
            self._successors.setdefault(ends[0], []).append(ends[1])
        if self._nx is not None:
            _add_to(self._nx, what, ends, attributes)

    def successors(self) -> dict[str, list[str]]:
        """Every edge's target by source (any kind of edge; one entry per edge)."""
        return self._successors

    # -- nodes ----------------------------------------------------------------

    def add_node(
        self,
        name: str | Callable[..., Any],
        fn: Callable[..., Any] | None = None,
        *,
        retry: RetryPolicy | None = None,
        destinations: Sequence[str] | None = None,
    ) -> StateGraph:
        """Add a node: `add_node("name", fn)` or `add_node(fn)` (named after the function).

        `destinations` declares where the node's `Command(goto=...)` may lead,
        for validation and diagrams.
        """
        if fn is None:
            if not callable(name):
                raise GraphValidationError(
                    f"add_node({name!r}) needs a function: add_node({name!r}, fn)", node=str(name)
                )
            fn, name = name, getattr(name, "__name__", type(name).__name__)
        if not isinstance(name, str) or not name:
            raise GraphValidationError(f"A node name must be a non-empty string, not {name!r}")
        if name in _RESERVED:
            raise GraphValidationError(
                f"'{name}' is reserved for the graph's entry/exit; choose another node name",
                node=name,
            )
        if self._is_node(name):
            raise GraphValidationError(
                f"Node '{name}' is already in the graph; node names must be unique", node=name
            )
        if hasattr(fn, "as_node") and hasattr(fn, "graph"):
            fn = fn.as_node(self.state)  # a compiled graph used as a node
        if not callable(fn):
            raise GraphValidationError(
                f"Node '{name}' must be callable (a function of the state), "
                f"not {type(fn).__name__}",
                node=name,
            )
        spec = self._spec(name, fn, retry, tuple(destinations or ()))
        self._specs[name] = spec
        self._add_to_structure("node", (name,), {"spec": spec, "kind": spec.kind})
        for target in spec.destinations:
            self._add_to_structure("edge", (name, target), {"kind": "command"})
        return self

    def _spec(
        self,
        name: str,
        fn: Callable[..., Any],
        retry: RetryPolicy | None,
        destinations: tuple[str, ...],
    ) -> NodeSpec:
        kind = getattr(fn, "node_kind", "function")
        return NodeSpec(name, fn, _is_async_callable(fn), retry, destinations, kind)

    def add_sequence(
        self, nodes: Sequence[Callable[..., Any] | tuple[str, Callable[..., Any]]]
    ) -> StateGraph:
        """Add nodes that run one after another, with edges between them."""
        names = []
        for item in nodes:
            if isinstance(item, tuple):
                self.add_node(item[0], item[1])
                names.append(item[0])
            else:
                self.add_node(item)
                names.append(getattr(item, "__name__", type(item).__name__))
        for a, b in itertools.pairwise(names):
            self.add_edge(a, b)
        return self

    # -- edges ----------------------------------------------------------------

    def add_edge(self, start: str | Sequence[str], end: str) -> StateGraph:
        """Run `end` after `start`; with a list of starts, after all of them have finished."""
        if isinstance(start, str):
            if start == END:
                raise GraphValidationError("END has no way out; an edge cannot start at END")
            if end == START:
                raise GraphValidationError("An edge cannot lead into START", node=start)
            self._edges.append((start, end))
            self._add_to_structure("edge", (start, end), {"kind": "direct"})
            return self
        sources = frozenset(start)
        if not sources:
            raise GraphValidationError(f"add_edge([], {end!r}) needs at least one start node")
        if START in sources or END in sources:
            raise GraphValidationError("A join edge cannot wait for START or END", node=end)
        self.joins.append((sources, end))
        for source in sorted(sources):
            self._add_to_structure("edge", (source, end), {"kind": "join"})
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[..., Any],
        path_map: Mapping[Hashable, str] | Sequence[str] | None = None,
    ) -> StateGraph:
        """After `source`, run the node(s) `path(state)` names (or `Send`s it returns).

        `path_map` maps the values `path` returns to node names (a list maps
        each name to itself); without it, a `Literal[...]` return hint tells
        validation and diagrams where the branch may go.
        """
        if not callable(path):
            raise GraphValidationError(
                f"The path of a conditional edge from '{source}' must be callable", node=source
            )
        mapping: Mapping[Hashable, str] | None
        if path_map is None:
            path_map = getattr(path, "destinations", None)  # e.g. a Router names its routes
        if path_map is None:
            mapping = None
            targets = _literal_targets(path)
            labels: Sequence[tuple[str, str]] = [(t, t) for t in targets or ()]
        elif isinstance(path_map, Mapping):
            mapping = dict(path_map)
            targets = tuple(dict.fromkeys(mapping.values()))
            labels = [(str(k), v) for k, v in mapping.items()]
        else:
            mapping = {name: name for name in path_map}
            targets = tuple(mapping.values())
            labels = [(t, t) for t in targets]
        branch = Branch(source, path, mapping, _is_async_callable(path), targets)
        self.branches.append(branch)
        for label, target in labels:
            self._add_to_structure(
                "edge", (source, target), {"kind": "conditional", "label": label}
            )
        return self

    # -- compile --------------------------------------------------------------

    def compile(
        self,
        checkpointer: Any = None,
        *,
        interrupt_before: Sequence[str] = (),
        interrupt_after: Sequence[str] = (),
        budget: Budget | None = None,
        name: str | None = None,
    ) -> CompiledGraph:
        """Validate the graph and return the runnable app; a broken graph raises here."""
        from flowgraph.graph._compiled import CompiledGraph
        from flowgraph.graph._validation import validate

        validate(self, interrupt_before=interrupt_before, interrupt_after=interrupt_after)
        return CompiledGraph(
            self,
            checkpointer=checkpointer,
            interrupt_before=tuple(interrupt_before),
            interrupt_after=tuple(interrupt_after),
            budget=budget,
            name=name or str(getattr(self.schema, "__name__", "graph")),
        )

    # -- read by validation and the plan ---------------------------------------

    def _is_node(self, name: str) -> bool:
        """True for an added node (an edge may name a node before it is added)."""
        return name in self._specs

    @property
    def nodes(self) -> dict[str, NodeSpec]:
        """The user's nodes by name (START and END excluded), in networkx's node order."""
        specs = self._specs
        return {n: specs[n] for n in self._mentioned if n in specs}

    def direct_edges(self) -> list[tuple[str, str]]:
        """Plain edges in the order they were added."""
        return list(self._edges)


def _add_to(
    graph: nx.MultiDiGraph[str], what: str, ends: tuple[str, ...], attributes: dict[str, Any]
) -> None:
    if what == "node":
        graph.add_node(ends[0], **attributes)
    else:
        graph.add_edge(ends[0], ends[1], **attributes)
