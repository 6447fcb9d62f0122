"""The neutral diagram model every renderer draws: nodes, edges and clusters.

`build_diagram` reads the compiled graph's networkx structure once and
turns it into plain frozen values, so Mermaid, DOT, ASCII, SVG and HTML all
draw the same thing and none of them knows about the engine.

Conventions fixed here (and documented in docs/diagrams.md):

- Order is stable: START first, then the nodes in the order they were added,
  END last; edges follow their source node, in the order they were added.
  The same graph always gives the same diagram, so text output can be
  snapshot-tested.
- A conditional edge carries the value its path returns as label (the
  path_map key, or the name from a `Literal[...]` hint); two values leading
  to the same node share one edge, labels joined with ", ".
- A branch whose targets are unknown (no path_map, no `Literal` hint) is
  usually a map step returning `Send`s. Nodes that nothing else leads to can
  only be reached that way, so the branch gets a dashed `send` edge labelled
  "Send" to each of them. When there is no such node, the branch may lead
  anywhere: it gets an unlabelled conditional edge to every node and END,
  as the peers draw it.
- A node with no edge out ends the run, so it gets a direct edge to END.
- A compiled graph used as a node becomes a cluster named after the node:
  the node itself is the cluster's entry (kind "subgraph"), the inner nodes
  follow with ids `"<node>:<inner>"`, and the inner END becomes the
  cluster's exit `"<node>:__end__"`, from which the node's outgoing edges
  leave. Subgraphs nest.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flowgraph.graph import END, START

if TYPE_CHECKING:
    import networkx as nx

    from flowgraph.graph import CompiledGraph
    from flowgraph.graph._core.spec import GraphSpec

__all__ = [
    "EDGE_KINDS",
    "NODE_KINDS",
    "Diagram",
    "DiagramEdge",
    "DiagramNode",
    "build_diagram",
    "display_name",
    "subgraph_of",
]

NODE_KINDS = ("start", "end", "model", "tool", "router", "persona", "function", "subgraph")
"""Every node kind a renderer must know how to draw."""

EDGE_KINDS = ("direct", "conditional", "command", "join", "send")
"""Every edge kind a renderer must know how to draw."""

SEND_LABEL = "Send"
_DETAIL_LIMIT = 160


@dataclass(frozen=True, slots=True)
class DiagramNode:
    """One box of the diagram."""

    id: str
    """The node name in the graph (`__start__`/`__end__` for START/END, `a:b` in cluster a)."""
    label: str
    """What to print: the node name, or "START"/"END" for the terminals."""
    kind: str
    """start | end | model | tool | router | persona | function | subgraph."""
    cluster: str | None = None
    """The cluster (subgraph node) this node belongs to, if any."""
    details: tuple[tuple[str, str], ...] = ()
    """Shown on hover in HTML, e.g. ("function", "mod.fn"), ("retry", "3 attempts")."""
    visits: int = 0
    """Times the thread ran this node (path overlay); 0 when not taken or no overlay."""
    steps: tuple[int, ...] = ()
    """The step numbers it ran in (path overlay), ascending."""


@dataclass(frozen=True, slots=True)
class DiagramEdge:
    """One arrow of the diagram."""

    source: str
    target: str
    kind: str
    """direct | conditional | command | join | send."""
    label: str | None = None
    taken: int = 0
    """Times the thread traversed this edge (path overlay)."""

    @property
    def is_dashed(self) -> bool:
        """Edges that may or may not be followed are drawn dashed."""
        return self.kind in ("conditional", "command", "send")


@dataclass(frozen=True, slots=True)
class Diagram:
    """A whole graph, ready to draw."""

    title: str
    nodes: tuple[DiagramNode, ...]
    """Stable order: START first, then insertion order, END last."""
    edges: tuple[DiagramEdge, ...]
    """Stable order: by source node, then in the order they were added."""
    clusters: tuple[tuple[str, str], ...] = ()
    """(cluster id, label), outer clusters before the ones nested in them."""
    thread_id: str | None = None
    """Set when a path overlay is applied."""
    cluster_parents: tuple[tuple[str, str], ...] = ()
    """(cluster id, parent cluster id) for clusters nested in another one."""

    def node(self, node_id: str) -> DiagramNode:
        """The node with this id; KeyError names the known ids."""
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(f"No node {node_id!r} in diagram {self.title!r}")

    def cluster_parent(self, cluster_id: str) -> str | None:
        """The cluster enclosing `cluster_id`, or None at top level."""
        return dict(self.cluster_parents).get(cluster_id)

    @property
    def has_overlay(self) -> bool:
        return self.thread_id is not None

    @property
    def caption(self) -> str:
        """The title every format prints, naming the thread when its path is drawn."""
        if self.thread_id is None:
            return self.title
        return f"{self.title} (thread {self.thread_id})"


def display_name(name: str) -> str:
    """START/END for the reserved names, the name itself otherwise."""
    if name == START:
        return "START"
    if name == END:
        return "END"
    return name


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


def _callable_name(fn: Callable[..., Any]) -> tuple[str, str]:
    if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isbuiltin(fn):
        module = getattr(fn, "__module__", None)
        qualname = getattr(fn, "__qualname__", getattr(fn, "__name__", "?"))
        return "function", f"{module}.{qualname}" if module else qualname
    return "callable", _shorten(repr(fn))


def _details(spec: Any) -> tuple[tuple[str, str], ...]:
    details: list[tuple[str, str]] = [("kind", spec.kind)]
    inner = getattr(spec.fn, "subgraph", None)
    if spec.kind == "subgraph" and inner is not None:
        details.append(("subgraph", str(getattr(inner, "name", "graph"))))
    else:
        details.append(_callable_name(spec.fn))
    if spec.is_async:
        details.append(("async", "yes"))
    retry = spec.retry
    if retry is not None:
        details.append(("retry", f"{retry.max_attempts} attempts"))
    if spec.defer:
        details.append(("defer", "runs once no other task is left"))
    if spec.destinations:
        details.append(("destinations", ", ".join(display_name(d) for d in spec.destinations)))
    return tuple(details)


@dataclass(slots=True)
class _Collector:
    """Mutable scratch space while walking a graph and its subgraphs."""

    nodes: list[DiagramNode] = field(default_factory=list)
    edges: list[DiagramEdge] = field(default_factory=list)
    clusters: list[tuple[str, str]] = field(default_factory=list)
    parents: list[tuple[str, str]] = field(default_factory=list)


def _raw_edges(
    graph: nx.MultiDiGraph[str], spec: GraphSpec
) -> list[tuple[str, str, str, str | None]]:
    """(source, target, kind, label) in stable order, duplicates merged, open branches resolved."""
    merged: dict[tuple[str, str, str], list[str]] = {}
    for source, target, data in graph.edges(data=True):
        kind = str(data.get("kind", "direct"))
        labels = merged.setdefault((source, target, kind), [])
        label = data.get("label")
        if label is not None:
            text = display_name(str(label))
            if text not in labels:
                labels.append(text)
    open_sources = [b.source for b in spec.branches if b.targets is None]
    if open_sources:
        statically_reached = {t for _, t in graph.in_edges()}
        only_dynamic = [
            n for n in graph.nodes if "spec" in graph.nodes[n] and n not in statically_reached
        ]
        for source in dict.fromkeys(open_sources):
            if only_dynamic:
                for target in only_dynamic:
                    merged.setdefault((source, target, "send"), [SEND_LABEL])
            else:
                for target in [n for n in graph.nodes if "spec" in graph.nodes[n]] + [END]:
                    merged.setdefault((source, target, "conditional"), [])
    # a node with no edge out ends the run: draw that edge, as LangGraph does
    has_out = {source for source, _, _ in merged} | set(open_sources)
    for name in graph.nodes:
        if name not in has_out and name != END and "spec" in graph.nodes[name]:
            merged[(name, END, "direct")] = []
    order = {name: i for i, name in enumerate(_node_order(graph))}
    items = sorted(merged.items(), key=lambda item: order.get(item[0][0], len(order)))
    return [(s, t, k, ", ".join(labels) or None) for (s, t, k), labels in items]


def _node_order(graph: nx.MultiDiGraph[str]) -> list[str]:
    inner = [n for n in graph.nodes if n not in (START, END)]
    return [START, *inner, END]


def _walk(
    app: CompiledGraph,
    out: _Collector,
    *,
    prefix: str,
    cluster: str | None,
    visits: dict[str, list[int]],
    taken: dict[tuple[str, str], int],
) -> None:
    """Add `app`'s nodes and edges to `out`; inside a cluster, ids get `prefix`."""
    graph = app.graph
    entry = prefix[:-1] if prefix else None  # the subgraph node standing for inner START

    def node_id(name: str) -> str:
        if entry is not None and name == START:
            return entry
        return prefix + name

    exits: dict[str, str] = {}  # subgraph node id -> its exit node id
    for name in _node_order(graph):
        data = graph.nodes[name]
        if name == START and entry is not None:
            continue  # the cluster's entry node was added by the parent
        if name in (START, END):
            ran = visits.get(name, []) if entry is None else []
            kind = "start" if name == START else "end"
            out.nodes.append(
                DiagramNode(
                    node_id(name), display_name(name), kind, cluster, (), len(ran), tuple(ran)
                )
            )
            continue
        spec = data["spec"]
        nid = node_id(name)
        ran = visits.get(name, []) if entry is None else []
        out.nodes.append(
            DiagramNode(
                nid,
                name,
                spec.kind,
                nid if subgraph_of(spec) is not None else cluster,
                _details(spec),
                len(ran),
                tuple(sorted(ran)),
            )
        )
        inner = subgraph_of(spec)
        if inner is not None:
            out.clusters.append((nid, name))
            if cluster is not None:
                out.parents.append((nid, cluster))
            _walk(inner, out, prefix=nid + ":", cluster=nid, visits={}, taken={})
            exits[nid] = nid + ":" + END
    for source, target, kind, label in _raw_edges(graph, app.spec):
        sid = node_id(source)
        count = taken.get((source, target), 0) if entry is None else 0
        out.edges.append(DiagramEdge(exits.get(sid, sid), node_id(target), kind, label, count))


def subgraph_of(spec: Any) -> CompiledGraph | None:
    if spec.kind != "subgraph":
        return None
    inner = getattr(spec.fn, "subgraph", None)
    return inner if inner is not None and hasattr(inner, "graph") else None


def build_diagram(app: CompiledGraph, *, thread_id: str | None = None) -> Diagram:
    """The diagram of `app`; with `thread_id`, overlaid with the path that thread took.

    The overlay reads the thread's checkpoints (the head's branch, oldest
    first): each node's visit count and step numbers, and how often each
    edge was followed. It needs a checkpointer; an unknown thread is an
    error naming it.
    """
    visits: dict[str, list[int]] = {}
    taken: dict[tuple[str, str], int] = {}
    if thread_id is not None:
        from flowgraph.viz._path import thread_path

        edges = [(s, t) for s, t, _, _ in _raw_edges(app.graph, app.spec)]
        path = thread_path(app, thread_id, edges)
        visits, taken = path.visits, path.taken
    out = _Collector()
    _walk(app, out, prefix="", cluster=None, visits=visits, taken=taken)
    # END of the top graph goes last, after any cluster contents
    nodes = [n for n in out.nodes if n.id != END] + [n for n in out.nodes if n.id == END]
    return Diagram(
        title=app.name,
        nodes=tuple(nodes),
        edges=tuple(out.edges),
        clusters=tuple(out.clusters),
        thread_id=thread_id,
        cluster_parents=tuple(out.parents),
    )
