"""`app.get_graph()`: the graph as LangGraph's drawable graph shows it.

`drawable_graph(app)` finds the edges the way LangGraph 1.2 does, by a dry
run of the graph's structure (no node is called): from START, each step
runs the nodes its edges reached, and every edge a node may take (direct,
a conditional edge's path_map or `Literal` values, `Command` destinations,
a join once all its sources ran) that leads to a node run next is drawn.
A branch or a Command leads on only the first time its node runs, and a
deferred node waits for a step that starts no other node, as in LangGraph.
So a node only an open branch (no path_map, no hint) leads to is drawn
without edges, a node that is reached but leads nowhere gets a solid edge
to END, and when no edge reaches END the node(s) of the dry run's last
step (a cycle runs 250 steps) get a dashed one. Edges come in sorted
order, one per (source, target). `tests/viz/test_get_graph_random.py`
compares the result with LangGraph's on random graphs.

With `xray` a compiled graph used as a node, or called by a node's
function, is drawn as its own nodes (`parent:child`), trimmed of its START
and END, as LangGraph does.
"""

from __future__ import annotations

import inspect
import os
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from flowgraph.graph import END, START
from flowgraph.viz._ascii import diagram_to_ascii
from flowgraph.viz._mermaid import langgraph_mermaid
from flowgraph.viz._model import NODE_KINDS, Diagram, DiagramEdge, DiagramNode, subgraph_of

if TYPE_CHECKING:
    from flowgraph.graph import CompiledGraph
    from flowgraph.graph._core.spec import GraphSpec

__all__ = ["CurveStyle", "DrawableGraph", "Edge", "Node", "NodeStyles", "drawable_graph"]

_DRY_RUN_STEPS = 250
"""How many steps the dry run takes at most (a cycle runs to it, as LangGraph's does)."""


class CurveStyle(Enum):
    """How Mermaid curves the edges (LangGraph's `CurveStyle`; a plain string works too)."""

    BASIS = "basis"
    BUMP_X = "bumpX"
    BUMP_Y = "bumpY"
    CARDINAL = "cardinal"
    CATMULL_ROM = "catmullRom"
    LINEAR = "linear"
    MONOTONE_X = "monotoneX"
    MONOTONE_Y = "monotoneY"
    NATURAL = "natural"
    STEP = "step"
    STEP_AFTER = "stepAfter"
    STEP_BEFORE = "stepBefore"


@dataclass
class NodeStyles:
    """The three Mermaid classes `draw_mermaid` defines (LangGraph's `NodeStyles`)."""

    default: str = "fill:#f2f0ff,line-height:1.2"
    first: str = "fill-opacity:0"
    last: str = "fill:#bfb6fc"


class Node(NamedTuple):
    """A node of the drawable graph: `id` is `parent:child` inside an expanded subgraph."""

    id: str
    name: str
    data: Any
    """The node's function (a compiled graph for a subgraph node); None for START and END."""
    metadata: dict[str, Any] | None
    """`add_node(metadata=...)`, then `defer`, `__interrupt` and `__tools` marks."""


class Edge(NamedTuple):
    """An edge of the drawable graph; `data` is its label (a path_map key), if any."""

    source: str
    target: str
    data: str | None = None
    conditional: bool = False


@dataclass
class DrawableGraph:
    """What `app.get_graph()` returns: nodes and edges, drawn as Mermaid, ASCII or PNG."""

    nodes: dict[str, Node] = field(default_factory=dict)
    """Node id -> node, in LangGraph's order (START, the nodes as added, END)."""
    edges: list[Edge] = field(default_factory=list)

    def first_node(self) -> Node | None:
        """The one node no edge leads to (None when there are none or several)."""
        targets = {edge.target for edge in self.edges}
        found = [node for node in self.nodes.values() if node.id not in targets]
        return found[0] if len(found) == 1 else None

    def last_node(self) -> Node | None:
        """The one node no edge leaves (None when there are none or several)."""
        sources = {edge.source for edge in self.edges}
        found = [node for node in self.nodes.values() if node.id not in sources]
        return found[0] if len(found) == 1 else None

    def to_json(self, *, with_schemas: bool = False) -> dict[str, list[dict[str, Any]]]:
        """Nodes and edges as LangGraph's JSON (`data.id` names our callable's module path)."""
        del with_schemas  # nodes carry no schemas here
        nodes: list[dict[str, Any]] = []
        for node in self.nodes.values():
            entry: dict[str, Any] = {"id": node.id}
            if node.data is not None:
                entry["type"] = "runnable"
                entry["data"] = {"id": _callable_path(node.data), "name": node.id}
            if node.metadata is not None:
                entry["metadata"] = node.metadata
            nodes.append(entry)
        edges: list[dict[str, Any]] = []
        for edge in self.edges:
            item: dict[str, Any] = {"source": edge.source, "target": edge.target}
            if edge.data is not None:
                item["data"] = edge.data
            if edge.conditional:
                item["conditional"] = True
            edges.append(item)
        return {"nodes": nodes, "edges": edges}

    def draw_mermaid(
        self,
        *,
        with_styles: bool = True,
        curve_style: CurveStyle | str = CurveStyle.LINEAR,
        node_colors: NodeStyles | None = None,
        wrap_label_n_words: int = 9,
        frontmatter_config: Mapping[str, Any] | None = None,
    ) -> str:
        """Mermaid flowchart text, line for line what LangGraph 1.2 writes for the graph."""
        first, last = self.first_node(), self.last_node()
        styles = node_colors or NodeStyles()
        return langgraph_mermaid(
            self.nodes,
            self.edges,
            first=first.id if first else None,
            last=last.id if last else None,
            with_styles=with_styles,
            curve=str(getattr(curve_style, "value", curve_style)),  # any enum of curve names
            styles=[(f.name, getattr(styles, f.name)) for f in fields(styles)],
            wrap_label_n_words=wrap_label_n_words,
            frontmatter_config=frontmatter_config,
        )

    def draw_ascii(self) -> str:
        """Boxes and arrows for a terminal, by our own renderer (not LangGraph's layout)."""
        return diagram_to_ascii(self._diagram())

    def print_ascii(self) -> None:
        """Print `draw_ascii()`."""
        print(self.draw_ascii())

    def draw_mermaid_png(
        self,
        *,
        curve_style: CurveStyle | str = CurveStyle.LINEAR,
        node_colors: NodeStyles | None = None,
        wrap_label_n_words: int = 9,
        output_file_path: str | os.PathLike[str] | None = None,
        background_color: str = "white",
        **ignored: Any,
    ) -> bytes:
        """A PNG of the graph, drawn on this machine (LangGraph sends the text to mermaid.ink).

        Our own layout and pixel font draw it, with nothing native and no
        network: the picture is ours, not Mermaid's. The Mermaid styling
        keywords are taken for LangGraph's signature; `draw_method`,
        `max_retries`, `base_url` and the like are ignored, since nothing
        is sent anywhere.
        """
        del curve_style, node_colors, wrap_label_n_words, ignored
        return self.draw_png(output_file_path, background_color=background_color)

    def draw_png(
        self,
        output_file_path: str | os.PathLike[str] | None = None,
        *,
        background_color: str = "white",
        **ignored: Any,
    ) -> bytes:
        """The graph as PNG bytes (our own layout), also written to `output_file_path`.

        `fontname` and `labels` (LangGraph's pygraphviz keywords) are ignored.
        """
        from flowgraph.viz._render import png_bytes

        del ignored
        data = png_bytes(self._diagram(), background=background_color)
        if output_file_path is not None:
            Path(output_file_path).write_bytes(data)
        return data

    def _diagram(self) -> Diagram:
        """The neutral model our renderers draw: the same nodes and edges, subgraphs as clusters."""
        nodes, clusters, parents = [], {}, []
        for node in self.nodes.values():
            *path, name = node.id.split(":")
            for depth in range(1, len(path) + 1):
                cluster = ":".join(path[:depth])
                if cluster not in clusters:
                    clusters[cluster] = path[depth - 1]
                    if depth > 1:
                        parents.append((cluster, ":".join(path[: depth - 1])))
            kind = "start" if node.id == START else "end" if node.id == END else _kind(node.data)
            nodes.append(DiagramNode(node.id, name, kind, ":".join(path) or None))
        nodes.sort(key=lambda n: n.id == END)  # the top graph's END last, after any cluster
        edges = [
            DiagramEdge(e.source, e.target, "conditional" if e.conditional else "direct", e.data)
            for e in self.edges
        ]
        return Diagram(
            "graph", tuple(nodes), tuple(edges), tuple(clusters.items()), None, tuple(parents)
        )


def _kind(data: Any) -> str:
    if hasattr(data, "spec") and hasattr(data, "graph"):
        return "subgraph"
    kind = str(getattr(data, "node_kind", "function"))
    return kind if kind in NODE_KINDS else "function"


def _callable_path(data: Any) -> list[str]:
    """Where the node's callable is defined: module parts and name (LangGraph's `data.id`)."""
    kind = data if inspect.isclass(data) else type(data)
    if inspect.isfunction(data) or inspect.ismethod(data):
        module, name = data.__module__, data.__qualname__
    else:
        module, name = kind.__module__, kind.__qualname__
    return [*str(module).split("."), str(name)]


# -- the dry run ----------------------------------------------------------------------

_Found = tuple[str, str, bool, str | None]
"""(source, target, conditional, label) of an edge the dry run found."""
_Channel = tuple[str, str]
"""("to", node) starts the node; ("join", index) is a join's barrier."""
_Write = tuple[_Channel, bool, str | None]
"""(channel, conditional, label): what a node writes that may start another node."""


def _order(edge: _Found) -> tuple[str, str, bool, tuple[bool, str]]:
    source, target, conditional, label = edge
    return source, target, conditional, (label is not None, label or "")


def _write_order(write: tuple[str, bool, str | None]) -> tuple[str, bool, tuple[bool, str]]:
    source, conditional, label = write
    return source, conditional, (label is not None, label or "")


@dataclass
class _Structure:
    """The static writes of each node, read once from the spec."""

    regular: dict[str, list[_Write]] = field(default_factory=lambda: defaultdict(list))
    """Written each time the node runs (direct edges, joins)."""
    declared: dict[str, list[_Write]] = field(default_factory=lambda: defaultdict(list))
    """Where a branch or a Command may lead: written the first time only, as LangGraph does."""
    to_end: dict[str, list[_Found]] = field(default_factory=lambda: defaultdict(list))
    """Conditional ways to END (edges at once: END is no node to start)."""
    joins: list[tuple[frozenset[str], str]] = field(default_factory=list)
    joins_into: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    """The joins (by index) that lead to each node."""
    inputs: dict[str, list[_Channel]] = field(default_factory=lambda: defaultdict(list))
    """The channels each node listens to: its own, and its joins' barriers."""


def _structure(spec: GraphSpec) -> _Structure:
    out = _Structure(joins=list(spec.joins))
    for name in spec.nodes:
        out.inputs[name].append(("to", name))
    for source, target in spec.edges:
        if target != END:
            out.regular[source].append((("to", target), False, None))
    for index, (sources, target) in enumerate(spec.joins):
        out.inputs[target].append(("join", str(index)))
        out.joins_into[target].append(index)
        for source in sorted(sources):
            out.regular[source].append((("join", str(index)), False, None))
    ways: list[tuple[str, str, str]] = []
    for branch in spec.branches:
        if branch.path_map is not None:
            ways += [(branch.source, str(k), v) for k, v in branch.path_map.items()]
        else:
            ways += [(branch.source, t, t) for t in branch.targets or ()]
    for name, node in spec.nodes.items():
        ways += [(name, target, target) for target in node.destinations]
    for source, label, target in ways:  # the label as written: None only when drawn
        if target == END:
            out.to_end[source].append((source, END, True, label))
        else:
            out.declared[source].append((("to", target), True, label))
    return out


def _dry_run(spec: GraphSpec) -> tuple[list[_Found], list[str]]:
    """The edges LangGraph's dry run finds, sorted, and the nodes of its last step."""
    structure = _structure(spec)
    found: set[_Found] = set()
    sources: dict[str, set[_Write]] = {}
    step_sources: dict[str, set[_Write]] = {}
    started: set[str] = set()
    barriers: dict[int, set[str]] = defaultdict(set)
    waiting: set[str] = set()  # deferred nodes whose own channel was written
    tasks = [START]
    for _ in range(-1, _DRY_RUN_STEPS):
        if not tasks:
            break
        written: set[_Channel] = set()
        completed: set[int] = set()  # joins whose last source wrote in this step
        step_sources = {}
        for task in tasks:  # a task first takes what started it: a join's barrier is reset
            waiting.discard(task)
            for index in structure.joins_into[task]:
                if barriers[index] >= structure.joins[index][0]:
                    barriers[index].clear()
        for task in tasks:
            # where a node first runs, a channel its branch may write takes that branch's
            # (last) label, even where a direct edge writes it: LangGraph's bookkeeping
            labels: dict[_Channel, str | None] = {}
            if task not in started:
                started.add(task)
                labels = {channel: label for channel, _, label in structure.declared[task]}
                written |= labels.keys()
                found |= set(structure.to_end[task])
            writes = set(structure.declared[task])
            for channel, _, _ in structure.regular[task]:
                written.add(channel)
                marked = channel in labels
                writes.add((channel, marked, labels[channel] if marked else None))
            step_sources[task] = writes
            for index, (members, _target) in enumerate(structure.joins):
                if task in members and task not in barriers[index]:
                    barriers[index].add(task)
                    if barriers[index] >= members:
                        completed.add(index)
        sources.update(step_sources)
        by_channel: dict[_Channel, set[tuple[str, bool, str | None]]] = defaultdict(set)
        for source, writes in sources.items():
            for channel, conditional, label in writes:
                by_channel[channel].add((source, conditional, label))
        ready: list[str] = []
        for name in spec.nodes:
            if spec.nodes[name].defer:  # held back until a step starts no other node
                if ("to", name) in written:
                    waiting.add(name)
            elif ("to", name) in written or completed & set(structure.joins_into[name]):
                ready.append(name)
        if not ready:  # the step started nothing: deferred nodes with all they wait for go
            ready = [
                name
                for name in spec.nodes
                if spec.nodes[name].defer
                and (
                    name in waiting
                    or any(barriers[i] >= structure.joins[i][0] for i in structure.joins_into[name])
                )
            ]
        tasks = ready
        for name in ready:
            added = False
            for channel in structure.inputs[name]:  # a node reads every channel it listens to
                for source, conditional, label in sorted(by_channel[channel], key=_write_order):
                    found.add((source, name, conditional, label))
                    if (channel, conditional, label) in step_sources.get(source, set()):
                        added = True
                    else:
                        sources[source].discard((channel, conditional, label))
            if not added:
                found |= {(source, name, True, None) for source in step_sources}
    return sorted(found, key=_order), list(step_sources)


def _metadata(app: CompiledGraph, name: str) -> dict[str, Any] | None:
    spec = app.spec.nodes[name]
    metadata = dict(app.graph.nodes[name].get("metadata") or {})
    if spec.defer:
        metadata["defer"] = True
    before, after = name in app.interrupt_before, name in app.interrupt_after
    if before or after:
        metadata["__interrupt"] = ",".join(
            w for w, on in (("before", before), ("after", after)) if on
        )
    tools = getattr(inspect.unwrap(spec.fn), "tools", None)
    if spec.kind == "tool" and isinstance(tools, Mapping) and tools:
        metadata["__tools"] = list(tools)
    return metadata or None


def _add_edge(
    graph: DrawableGraph,
    source: str,
    target: str,
    *,
    data: str | None = None,
    conditional: bool = False,
) -> None:
    if any(e.source == source and e.target == target for e in graph.edges):
        return
    if target == END and END not in graph.nodes:
        graph.nodes[END] = Node(END, END, None, None)
    graph.edges.append(Edge(source, target, data, conditional))


def _expand(graph: DrawableGraph, name: str, inner: DrawableGraph) -> None:
    """Put `inner`'s nodes in place of the node `name`, trimmed of its START and END."""
    if len(inner.nodes) <= 1 or name not in graph.nodes:
        return
    if inner.first_node() is None or inner.last_node() is None:
        return
    for end, pick in ((0, DrawableGraph.first_node), (1, DrawableGraph.last_node)):
        node = pick(inner)
        if node is None:
            continue
        rest = DrawableGraph(
            {k: v for k, v in inner.nodes.items() if k != node.id},
            [e for e in inner.edges if e[end] != node.id],
        )
        touching = {e for e in inner.edges if e[end] == node.id}
        if pick(rest) is not None and len(touching) == 1:
            inner.nodes.pop(node.id)
            inner.edges = [e for e in inner.edges if node.id not in (e.source, e.target)]
    graph.nodes.pop(name)
    prefix = f"{name}:"
    graph.nodes.update({prefix + k: v._replace(id=prefix + k) for k, v in inner.nodes.items()})
    graph.edges.extend(
        e._replace(source=prefix + e.source, target=prefix + e.target) for e in inner.edges
    )
    first, last = inner.first_node(), inner.last_node()
    entry = prefix + first.id if first else None
    exit_ = prefix + last.id if last else None
    for index, edge in enumerate(graph.edges):
        if edge.source == name and exit_:
            edge = edge._replace(source=exit_)
        if edge.target == name and entry:
            edge = edge._replace(target=entry)
        graph.edges[index] = edge


def _called_graph(fn: Any) -> CompiledGraph | None:
    """A compiled graph a node's function calls (`sub.invoke(state)`), found by name.

    The names the function's code reads, closure variables first, then
    globals: the first that is a compiled graph is the subgraph xray draws
    inside the node, as LangGraph does.
    """
    try:
        names = inspect.getclosurevars(inspect.unwrap(fn))
    except (TypeError, ValueError):  # a callable object or a builtin: nothing to read
        return None
    for value in (*names.nonlocals.values(), *names.globals.values()):
        if hasattr(value, "spec") and hasattr(value, "graph") and hasattr(value, "get_graph"):
            found: CompiledGraph = value
            return found
    return None


def drawable_graph(app: CompiledGraph, *, xray: bool | int = False) -> DrawableGraph:
    """`app` as LangGraph's drawable graph; `xray` expands subgraph nodes (an int: that deep)."""
    from flowgraph.graph._functional import Entrypoint

    graph = DrawableGraph()
    if isinstance(app, Entrypoint):  # drawn as LangGraph draws an @entrypoint
        graph.nodes[app.name] = Node(app.name, app.name, app.fn, None)
        graph.nodes[START] = Node(START, START, None, None)
        _add_edge(graph, START, app.name)
        _add_edge(graph, app.name, END, conditional=True)
        return graph
    graph.nodes[START] = Node(START, START, None, None)
    for name, spec in app.spec.nodes.items():
        data = subgraph_of(spec) or inspect.unwrap(spec.fn)  # the function as written
        graph.nodes[name] = Node(name, name, data, _metadata(app, name))
    found, last_step = _dry_run(app.spec)
    for source, target, conditional, label in found:
        shown = None if label == target else label  # a list path_map or a hint: no label
        _add_edge(graph, source, target, data=shown, conditional=conditional)
    termini = {t for _, t, _, _ in found if t != END} - {s for s, _, _, _ in found}
    if termini:
        for source in sorted(termini):
            _add_edge(graph, source, END)
    elif len(last_step) == 1 and not any(t == END for _, t, _, _ in found):
        _add_edge(graph, last_step[0], END, conditional=True)
    if xray:
        deeper = xray if isinstance(xray, bool) or xray <= 0 else xray - 1
        for name, spec in app.spec.nodes.items():
            inner = subgraph_of(spec) or _called_graph(spec.fn)
            if inner is not None:
                _expand(graph, name, drawable_graph(inner, xray=deeper))
    return graph
