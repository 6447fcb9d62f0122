"""Graphviz DOT text for a diagram, with the same conventions as the Mermaid output.

Identifiers are the same safe slugs as in Mermaid; labels are quoted DOT
strings with backslashes, quotes and ampersands escaped (Graphviz would
otherwise read `\\N` as an escape and `&amp;` as an entity). Subgraphs are `cluster_` subgraphs,
so `dot` draws a box around them. Conditional, Command and Send edges are
dashed; conditional and Send edges carry their labels; a join is bold.
Under a path overlay the visited nodes and taken edges are drawn thick in
orange with their counts, everything else grey.
"""

from __future__ import annotations

from flowgraph.viz._model import Diagram, DiagramEdge, DiagramNode
from flowgraph.viz._names import diagram_identifiers, edge_caption, visit_caption

__all__ = ["diagram_to_dot", "quote"]

_SHAPES = {
    "start": 'shape=oval, style=filled, fillcolor="#212529", fontcolor="#ffffff"',
    "end": 'shape=oval, style=filled, fillcolor="#212529", fontcolor="#ffffff"',
    "model": 'shape=box, style="rounded,filled", fillcolor="#e7f5ff", color="#1c7ed6"',
    "tool": 'shape=component, style=filled, fillcolor="#fff4e6", color="#e8590c"',
    "router": 'shape=diamond, style=filled, fillcolor="#f3f0ff", color="#7048e8"',
    "persona": 'shape=hexagon, style=filled, fillcolor="#e6fcf5", color="#0ca678"',
    "function": 'shape=box, style=filled, fillcolor="#f8f9fa", color="#495057"',
    "subgraph": 'shape=folder, style=filled, fillcolor="#fff9db", color="#f08c00"',
}

_EDGE_STYLES = {
    "direct": "",
    "conditional": "style=dashed",
    "command": "style=dashed, arrowhead=vee",
    "send": 'style=dashed, arrowhead=veevee, color="#1971c2"',
    "join": "style=bold",
}

_HIGHLIGHT = 'color="#d9480f", penwidth=2.5'
_GREY = 'color="#adb5bd", fontcolor="#868e96"'


def quote(text: str) -> str:
    """`text` as a double-quoted DOT string that Graphviz prints verbatim."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")
    escaped = escaped.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n")
    return f'"{escaped}"'


def _node_line(node: DiagramNode, ident: str, overlay: bool) -> str:
    label = node.label
    caption = visit_caption(node)
    if caption:
        label = f"{label}\n{caption}"
    attrs = [f"label={quote(label)}", _SHAPES.get(node.kind, _SHAPES["function"])]
    if overlay:
        attrs.append(_HIGHLIGHT if node.visits else _GREY)
    return f"{ident} [{', '.join(attrs)}];"


def _edge_line(edge: DiagramEdge, ids: dict[str, str], overlay: bool) -> str:
    attrs = [a for a in (_EDGE_STYLES.get(edge.kind, ""),) if a]
    caption = edge_caption(edge, overlay=overlay)
    if caption:
        attrs.insert(0, f"label={quote(caption)}")
    if overlay:
        attrs.append(_HIGHLIGHT if edge.taken else _GREY)
    suffix = f" [{', '.join(attrs)}]" if attrs else ""
    return f"{ids[edge.source]} -> {ids[edge.target]}{suffix};"


def diagram_to_dot(diagram: Diagram) -> str:
    """The diagram as a Graphviz digraph, ending with a newline."""
    node_ids, cluster_ids = diagram_identifiers(diagram)
    overlay = diagram.has_overlay
    title = diagram.caption
    lines = [
        "digraph flowgraph {",
        f"    label={quote(title)};",
        "    labelloc=t;",
        "    rankdir=TB;",
        '    node [fontname="Helvetica", fontsize=12];',
        '    edge [fontname="Helvetica", fontsize=10];',
    ]
    members: dict[str | None, list[DiagramNode]] = {}
    for node in diagram.nodes:
        members.setdefault(node.cluster, []).append(node)
    children: dict[str | None, list[tuple[str, str]]] = {}
    for cluster, label in diagram.clusters:
        children.setdefault(diagram.cluster_parent(cluster), []).append((cluster, label))

    def emit(cluster: str | None, depth: int) -> None:
        pad = "    " * depth
        for node in members.get(cluster, []):
            lines.append(pad + _node_line(node, node_ids[node.id], overlay))
        for child, label in children.get(cluster, []):
            lines.append(f"{pad}subgraph {cluster_ids[child]} {{")
            lines.append(f"{pad}    label={quote(label)};")
            lines.append(f'{pad}    style="rounded,dashed"; color="#f08c00";')
            emit(child, depth + 1)
            lines.append(f"{pad}}}")

    emit(None, 1)
    for edge in diagram.edges:
        lines.append("    " + _edge_line(edge, node_ids, overlay))
    lines.append("}")
    return "\n".join(lines) + "\n"
