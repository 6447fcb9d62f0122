"""Boxes and arrows for a terminal, with no dependency: one box per node, top to bottom.

The nodes appear in diagram order (START first, END last). An edge to the
next box is drawn as a vertical arrow between them (`|` plain, `:` dashed,
`#` join) with its label beside it; every other edge is listed to the right
of its source box (`--> agent`, `-.-> END  [finish]`). Subgraph contents are
indented inside a bracket. Lines stay within 80 columns (wide characters
such as Chinese count as two): long names are cut with "...".
"""

from __future__ import annotations

import unicodedata

from flowgraph.viz._model import Diagram, DiagramEdge, DiagramNode

__all__ = ["WIDTH", "diagram_to_ascii", "display_width"]

WIDTH = 80
"""The widest line `diagram_to_ascii` writes, in terminal columns."""

_ARROWS = {"direct": "-->", "conditional": "-.->", "command": "-.->", "send": "-.->", "join": "==>"}
_RAILS = {"direct": "|", "conditional": ":", "command": ":", "send": ":", "join": "#"}
_TAGS = {"command": "Command", "join": "join"}
_INDENT = "|   "
_MAX_LABEL = 40


def display_width(text: str) -> int:
    """Columns `text` takes in a terminal (East Asian wide characters take two)."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _fit(text: str, columns: int) -> str:
    """`text` cut to `columns` display columns, ending in '...' when cut."""
    if display_width(text) <= columns:
        return text
    out = ""
    for ch in text:
        if display_width(out + ch) > columns - 3:
            break
        out += ch
    return out + "..."


def _printable(text: str) -> str:
    return " ".join(text.split())


def _edge_text(edge: DiagramEdge, labels: dict[str, str]) -> str:
    target = labels[edge.target]
    tags = [t for t in (edge.label, _TAGS.get(edge.kind)) if t and t != target]
    suffix = f"  [{', '.join(tags)}]" if tags else ""
    return f"{_ARROWS.get(edge.kind, '-->')} {target}{suffix}"


def _depths(diagram: Diagram) -> dict[str | None, int]:
    depths: dict[str | None, int] = {None: 0}
    for cluster, _ in diagram.clusters:  # outer clusters come first
        depths[cluster] = depths.get(diagram.cluster_parent(cluster), 0) + 1
    return depths


def diagram_to_ascii(diagram: Diagram) -> str:
    """The diagram as plain text, ending with a newline."""
    labels = {n.id: _printable(n.label) for n in diagram.nodes}
    depths = _depths(diagram)
    cluster_labels = dict(diagram.clusters)
    outgoing: dict[str, list[DiagramEdge]] = {}
    for edge in diagram.edges:
        outgoing.setdefault(edge.source, []).append(edge)

    title = _fit(_printable(diagram.title), WIDTH)
    lines = [title, "=" * display_width(title), ""]
    stack: list[str] = []  # open clusters
    nodes = list(diagram.nodes)
    for index, node in enumerate(nodes):
        _open_close(lines, stack, node, diagram, cluster_labels, depths)
        pad = _INDENT * len(stack)
        room = WIDTH - display_width(pad)
        following = nodes[index + 1] if index + 1 < len(nodes) else None
        edges = list(outgoing.get(node.id, ()))
        down = next((e for e in edges if following and e.target == following.id), None)
        if down is not None:
            edges.remove(down)
        _box(lines, pad, room, node, [_edge_text(e, labels) for e in edges], labels)
        if down is not None:
            rail = _RAILS.get(down.kind, "|")
            tags = [t for t in (down.label, _TAGS.get(down.kind)) if t]
            beside = f"  {', '.join(tags)}" if tags else ""
            lines.append(_fit(f"{pad}    {rail}{beside}", WIDTH))
            lines.append(f"{pad}    v")
        else:
            lines.append(pad.rstrip())
    while stack:
        stack.pop()
        lines.append((_INDENT * len(stack) + "'---").rstrip())
    while lines and not lines[-1].strip():
        lines.pop()
    lines += [
        "",
        "--> edge   -.-> conditional, Command or Send   ==> join (waits for all)",
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _open_close(
    lines: list[str],
    stack: list[str],
    node: DiagramNode,
    diagram: Diagram,
    cluster_labels: dict[str, str],
    depths: dict[str | None, int],
) -> None:
    """Close the clusters `node` is not in, open the ones it enters."""
    chain: list[str] = []
    cluster = node.cluster
    while cluster is not None:
        chain.insert(0, cluster)
        cluster = diagram.cluster_parent(cluster)
    while stack and stack != chain[: len(stack)]:
        stack.pop()
        lines.append((_INDENT * len(stack) + "'---").rstrip())
    for cluster in chain[len(stack) :]:
        pad = _INDENT * len(stack)
        header = f"{pad}.--- subgraph {_printable(cluster_labels.get(cluster, cluster))}"
        lines.append(_fit(header, WIDTH))
        stack.append(cluster)


def _box(
    lines: list[str],
    pad: str,
    room: int,
    node: DiagramNode,
    side: list[str],
    labels: dict[str, str],
) -> None:
    label = _fit(labels[node.id], min(_MAX_LABEL, max(room - 8, 8)))
    inner = display_width(label)
    border = "+" + "-" * (inner + 2) + "+"
    box = [border, f"| {label} |", border]
    kind = node.kind if node.kind not in ("start", "end") else ""
    # the node's kind beside its name, the other edges from the bottom border down
    notes = ["", kind, *side]
    notes += [""] * (3 - len(notes))
    blank = " " * (inner + 4)
    for i, note in enumerate(notes):
        left = box[i] if i < 3 else blank
        lines.append(_fit(f"{pad}{left}  {note}" if note else f"{pad}{left}", WIDTH))
