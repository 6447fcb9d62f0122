"""Mermaid flowchart text for a diagram.

Identifiers are safe slugs of the node names (see `_names`); what the
reader sees is the quoted label, with every character Mermaid would
interpret (quotes, `#`, `<`, `>`, `&`, backticks) written as an entity, so
`end`, `say "hi"`, `[draft]`, `a|b` or `问候` draw as they are spelled.

Shapes: START/END stadiums, model rounded, tool a subroutine box, router a
rhombus, persona a hexagon, function a rectangle, a subgraph's entry a
trapezoid inside its cluster. Edges: `-->` plain, `-.->` conditional,
Command and Send (with their labels), `==>` a join. Under a path overlay
the visited nodes and taken edges are highlighted and the rest faded.
"""

from __future__ import annotations

import json

from flowgraph.viz._model import Diagram, DiagramEdge, DiagramNode
from flowgraph.viz._names import diagram_identifiers, edge_caption, visit_caption

__all__ = ["diagram_to_mermaid", "escape"]

_ENTITIES = {
    "#": "#35;",
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "&": "#amp;",
    "`": "#96;",
    "|": "#124;",
    ";": "#59;",
}

_SHAPES = {
    "start": ('(["', '"])'),
    "end": ('(["', '"])'),
    "model": ('("', '")'),
    "tool": ('[["', '"]]'),
    "router": ('{"', '"}'),
    "persona": ('{{"', '"}}'),
    "function": ('["', '"]'),
    "subgraph": ('[/"', '"\\]'),
}

_ARROWS = {
    "direct": "-->",
    "conditional": "-.->",
    "command": "-.->",
    "send": "-.->",
    "join": "==>",
}

_CLASSES = (
    ("fg_start", "fill:#212529,color:#ffffff,stroke:#212529"),
    ("fg_end", "fill:#212529,color:#ffffff,stroke:#212529"),
    ("fg_model", "fill:#e7f5ff,stroke:#1c7ed6"),
    ("fg_tool", "fill:#fff4e6,stroke:#e8590c"),
    ("fg_router", "fill:#f3f0ff,stroke:#7048e8"),
    ("fg_persona", "fill:#e6fcf5,stroke:#0ca678"),
    ("fg_function", "fill:#f8f9fa,stroke:#495057"),
    ("fg_subgraph", "fill:#fff9db,stroke:#f08c00"),
)
_VISITED = ("fg_visited", "stroke:#d9480f,stroke-width:3px")
_FADED = ("fg_faded", "opacity:0.45")
_TAKEN_STYLE = "stroke:#d9480f,stroke-width:3px"


def escape(text: str) -> str:
    """`text` safe inside a double-quoted Mermaid label; newlines become line breaks."""
    out = "".join(_ENTITIES.get(ch, ch) for ch in text)
    return out.replace("\r\n", "<br>").replace("\n", "<br>")


def _node_line(node: DiagramNode, ident: str) -> str:
    opening, closing = _SHAPES.get(node.kind, _SHAPES["function"])
    label = escape(node.label)
    caption = visit_caption(node)
    if caption:
        label = f"{label}<br>{escape(caption)}"
    kind = node.kind if f"fg_{node.kind}" in dict(_CLASSES) else "function"
    return f"{ident}{opening}{label}{closing}:::fg_{kind}"


def _edge_line(edge: DiagramEdge, ids: dict[str, str], overlay: bool) -> str:
    arrow = _ARROWS.get(edge.kind, "-->")
    caption = edge_caption(edge, overlay=overlay)
    text = f'|"{escape(caption)}"|' if caption else ""
    return f"{ids[edge.source]} {arrow}{text} {ids[edge.target]}"


def diagram_to_mermaid(diagram: Diagram) -> str:
    """The diagram as a Mermaid flowchart (top to bottom), ending with a newline."""
    node_ids, cluster_ids = diagram_identifiers(diagram)
    overlay = diagram.has_overlay
    title = diagram.caption
    lines = ["---", f"title: {json.dumps(title, ensure_ascii=False)}", "---", "flowchart TD"]

    members: dict[str | None, list[DiagramNode]] = {}
    for node in diagram.nodes:
        members.setdefault(node.cluster, []).append(node)
    children: dict[str | None, list[tuple[str, str]]] = {}
    for cluster, label in diagram.clusters:
        children.setdefault(diagram.cluster_parent(cluster), []).append((cluster, label))

    def emit(cluster: str | None, depth: int) -> None:
        pad = "    " * depth
        for node in members.get(cluster, []):
            lines.append(pad + _node_line(node, node_ids[node.id]))
        for child, label in children.get(cluster, []):
            lines.append(f'{pad}subgraph {cluster_ids[child]}["{escape(label)}"]')
            lines.append(f"{pad}    direction TB")
            emit(child, depth + 1)
            lines.append(f"{pad}end")

    emit(None, 1)
    taken: list[int] = []
    for index, edge in enumerate(diagram.edges):
        lines.append("    " + _edge_line(edge, node_ids, overlay))
        if overlay and edge.taken:
            taken.append(index)
    used = {f"fg_{n.kind}" for n in diagram.nodes}
    for name, style in (*_CLASSES, *((_VISITED, _FADED) if overlay else ())):
        if name in used or (overlay and name in (_VISITED[0], _FADED[0])):
            lines.append(f"    classDef {name} {style}")
    if overlay:
        for name, wanted in ((_VISITED[0], True), (_FADED[0], False)):
            chosen = [node_ids[n.id] for n in diagram.nodes if bool(n.visits) is wanted]
            if chosen:
                lines.append(f"    class {','.join(chosen)} {name}")
    if taken:
        lines.append(f"    linkStyle {','.join(map(str, taken))} {_TAKEN_STYLE}")
    return "\n".join(lines) + "\n"
