"""SVG written by our own code from the layered layout: no Graphviz, no browser, no fonts read.

The document uses presentation attributes only (no CSS is needed to draw
it), so any viewer shows the same picture; classes and `data-node` ids are
there for the HTML page's hover and highlight. Every piece of user text
goes through `escape`, so node names like `<b>&amp;</b>` stay text.
Numbers are rounded to a tenth, so the same diagram gives the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from flowgraph.viz._geometry import (
    FONT_SIZE,
    LINE_HEIGHT,
    SMALL_FONT_SIZE,
    EdgeRoute,
    Layout,
    NodeBox,
    Point,
    node_lines,
    text_width,
)
from flowgraph.viz._layout import layout_diagram
from flowgraph.viz._model import Diagram, DiagramNode

__all__ = ["FONT_FAMILY", "diagram_svg", "escape", "layout_svg"]

FONT_FAMILY = (
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'Noto Sans CJK SC', "
    "'Helvetica Neue', Arial, sans-serif"
)
MARGIN = 20.0
TITLE_SIZE = 16.0
ACCENT = "#e11d48"
ACCENT_TEXT = "#be123c"

KIND_STYLE: dict[str, tuple[str, str, str]] = {
    # kind: (fill, stroke, text)
    "start": ("#1f2937", "#111827", "#ffffff"),
    "end": ("#1f2937", "#111827", "#ffffff"),
    "model": ("#dbeafe", "#2563eb", "#0b1f4d"),
    "tool": ("#dcfce7", "#16a34a", "#052e16"),
    "router": ("#fef3c7", "#d97706", "#451a03"),
    "persona": ("#f3e8ff", "#9333ea", "#3b0764"),
    "function": ("#f8fafc", "#64748b", "#0f172a"),
    "subgraph": ("#ccfbf1", "#0d9488", "#042f2e"),
}
KIND_NAMES = {
    "model": "model",
    "tool": "tools",
    "router": "router",
    "persona": "persona switch",
    "function": "function",
    "subgraph": "subgraph",
}

EDGE_STYLE: dict[str, tuple[str, str | None, float]] = {
    # kind: (colour, dash pattern, width)
    "direct": ("#475569", None, 1.4),
    "conditional": ("#475569", "6 4", 1.4),
    "command": ("#7c3aed", "2 4", 1.6),
    "join": ("#475569", None, 2.4),
    "send": ("#0d9488", "9 3 2 3", 1.5),
}
EDGE_NAMES = {
    "direct": "edge",
    "conditional": "conditional",
    "command": "Command goto",
    "join": "join (waits for all)",
    "send": "Send (fan-out)",
}

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape(text: str, *, quote: bool = True) -> str:
    """Text safe in XML content and double-quoted attributes; invalid characters become U+FFFD."""
    text = _INVALID_XML.sub("\ufffd", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if quote:
        text = text.replace('"', "&quot;")
    return text


def _n(value: float) -> str:
    """A coordinate: at most one decimal, no trailing zero, never -0."""
    text = f"{round(value, 1) + 0.0:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _points(points: Iterable[Point]) -> str:
    return " ".join(f"{_n(x)},{_n(y)}" for x, y in points)


def _curve(points: Sequence[Point]) -> str:
    """Vertical S-curves through the points: smooth, with vertical tangents at each point."""
    (x0, y0), rest = points[0], points[1:]
    parts = [f"M{_n(x0)},{_n(y0)}"]
    for x1, y1 in rest:
        mid = (y0 + y1) / 2
        parts.append(f"C{_n(x0)},{_n(mid)} {_n(x1)},{_n(mid)} {_n(x1)},{_n(y1)}")
        x0, y0 = x1, y1
    return " ".join(parts)


def _lane(points: Sequence[Point], radius: float = 8.0) -> str:
    """Straight legs joined by rounded corners."""
    parts = [f"M{_n(points[0][0])},{_n(points[0][1])}"]
    for (ax, ay), (bx, by), (cx, cy) in zip(points, points[1:], points[2:], strict=False):
        before = max(abs(bx - ax), abs(by - ay))
        after = max(abs(cx - bx), abs(cy - by))
        r = min(radius, before / 2, after / 2)
        if r <= 0:
            parts.append(f"L{_n(bx)},{_n(by)}")
            continue
        px = bx - (bx - ax) / before * r if before else bx
        py = by - (by - ay) / before * r if before else by
        qx = bx + (cx - bx) / after * r if after else bx
        qy = by + (cy - by) / after * r if after else by
        parts.append(f"L{_n(px)},{_n(py)} Q{_n(bx)},{_n(by)} {_n(qx)},{_n(qy)}")
    last = points[-1]
    parts.append(f"L{_n(last[0])},{_n(last[1])}")
    return " ".join(parts)


def _shape(kind: str, box: NodeBox, fill: str, stroke: str, width: float) -> list[str]:
    left, top = box.x - box.width / 2, box.y - box.height / 2
    right, bottom = left + box.width, top + box.height
    paint = f'fill="{fill}" stroke="{stroke}" stroke-width="{_n(width)}"'
    rect = f'x="{_n(left)}" y="{_n(top)}" width="{_n(box.width)}" height="{_n(box.height)}"'
    if kind in ("start", "end"):
        return [f'<rect {rect} rx="{_n(box.height / 2)}" {paint}/>']
    if kind == "router":
        inset = 12.0
        corners = [
            (left + inset, top),
            (right - inset, top),
            (right, box.y),
            (right - inset, bottom),
            (left + inset, bottom),
            (left, box.y),
        ]
        return [f'<polygon points="{_points(corners)}" {paint}/>']
    if kind == "persona":
        c = 9.0
        corners = [
            (left + c, top),
            (right - c, top),
            (right, top + c),
            (right, bottom - c),
            (right - c, bottom),
            (left + c, bottom),
            (left, bottom - c),
            (left, top + c),
        ]
        return [f'<polygon points="{_points(corners)}" {paint}/>']
    if kind == "subgraph":
        inner = (
            f'x="{_n(left + 3)}" y="{_n(top + 3)}" width="{_n(box.width - 6)}" '
            f'height="{_n(box.height - 6)}"'
        )
        return [
            f'<rect {rect} rx="5" {paint}/>',
            f'<rect {inner} rx="3" fill="none" stroke="{stroke}" stroke-width="1"/>',
        ]
    radius = {"model": 10.0, "tool": 2.0}.get(kind, 5.0)
    return [f'<rect {rect} rx="{_n(radius)}" {paint}/>']


def _node(index: int, box: NodeBox, overlay: bool) -> list[str]:
    node = box.node
    fill, stroke, ink = KIND_STYLE.get(node.kind, KIND_STYLE["function"])
    width = 1.5
    if overlay and node.visits:
        stroke, width = ACCENT, 2.6
    faded = overlay and not node.visits and node.kind not in ("start", "end")
    opacity = ' opacity="0.55"' if faded else ""
    title = f"{node.label} ({node.kind})"
    if node.visits:
        title += f": ran {node.visits} time{'s' if node.visits != 1 else ''}"
    out = [
        f'<g class="fg-node fg-kind-{escape(node.kind)}" id="fg-node-{index}" '
        f'data-node="{escape(node.id)}"{opacity}>',
        f"<title>{escape(title, quote=False)}</title>",
    ]
    out += _shape(node.kind, box, fill, stroke, width)
    lines = node_lines(node)
    heights = [LINE_HEIGHT if size == FONT_SIZE else size + 4 for _, size in lines]
    y = box.y - sum(heights) / 2
    for (text, size), height in zip(lines, heights, strict=True):
        baseline = y + height / 2 + size * 0.35
        is_overlay = size != FONT_SIZE
        colour = ACCENT_TEXT if is_overlay and node.kind not in ("start", "end") else ink
        weight = ' font-weight="600"' if node.kind in ("start", "end") and not is_overlay else ""
        out.append(
            f'<text x="{_n(box.x)}" y="{_n(baseline)}" font-size="{_n(size)}" '
            f'fill="{colour}" text-anchor="middle"{weight}>{escape(text, quote=False)}</text>'
        )
        y += height
    out.append("</g>")
    return out


def _edge_paint(route: EdgeRoute, overlay: bool) -> tuple[str, str | None, float, str, str]:
    """(colour, dash, width, marker id, extra attributes) for one edge."""
    colour, dash, width = EDGE_STYLE.get(route.edge.kind, EDGE_STYLE["direct"])
    marker = f"fg-arrow-{route.edge.kind if route.edge.kind in EDGE_STYLE else 'direct'}"
    extra = ""
    if overlay and route.edge.taken:
        colour, width, marker = ACCENT, max(width, 2.4), "fg-arrow-taken"
    elif overlay:
        extra = ' opacity="0.4"'
    return colour, dash, width, marker, extra


def _edge(index: int, route: EdgeRoute, overlay: bool) -> list[str]:
    colour, dash, width, marker, extra = _edge_paint(route, overlay)
    edge = route.edge
    d = _curve(route.points) if route.shape == "curve" else _lane(route.points)
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    kinds = f"fg-edge fg-edge-{escape(edge.kind)}" + (" fg-back" if route.is_back else "")
    return [
        f'<g class="{kinds}" id="fg-edge-{index}" data-source="{escape(edge.source)}" '
        f'data-target="{escape(edge.target)}"{extra}>',
        f"<title>{escape(_edge_title(route), quote=False)}</title>",
        f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="{_n(width)}"{dashes} '
        f'stroke-linecap="round" stroke-linejoin="round" marker-end="url(#{marker})"/>',
        "</g>",
    ]


def _edge_title(route: EdgeRoute) -> str:
    edge = route.edge
    text = f"{edge.source} → {edge.target} ({edge.kind})"
    if edge.label:
        text += f": {edge.label}"
    if edge.taken:
        text += f", taken {edge.taken} time{'s' if edge.taken != 1 else ''}"
    return text


def _edge_label(index: int, route: EdgeRoute, overlay: bool) -> list[str]:
    rect = route.label_rect
    if rect is None or route.label is None:
        return []
    colour = ACCENT_TEXT if overlay and route.edge.taken else "#334155"
    faded = ' opacity="0.55"' if overlay and not route.edge.taken else ""
    baseline = rect.y + rect.height / 2 + SMALL_FONT_SIZE * 0.35
    return [
        f'<g class="fg-edge-label" data-edge="fg-edge-{index}"{faded}>',
        f'<rect x="{_n(rect.x)}" y="{_n(rect.y)}" width="{_n(rect.width)}" '
        f'height="{_n(rect.height)}" rx="3" fill="#ffffff" fill-opacity="0.92"/>',
        f'<text x="{_n(rect.x + rect.width / 2)}" y="{_n(baseline)}" '
        f'font-size="{_n(SMALL_FONT_SIZE)}" fill="{colour}" '
        f'text-anchor="middle">{escape(route.label, quote=False)}</text>',
        "</g>",
    ]


def _markers() -> list[str]:
    colours = {kind: style[0] for kind, style in EDGE_STYLE.items()} | {"taken": ACCENT}
    out = ["<defs>"]
    for name, colour in colours.items():
        out.append(
            f'<marker id="fg-arrow-{name}" viewBox="0 0 10 10" refX="9.5" refY="5" '
            f'markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto">'
            f'<path d="M0,0.8 L10,5 L0,9.2 z" fill="{colour}"/></marker>'
        )
    out.append("</defs>")
    return out


def _legend_items(layout: Layout) -> list[tuple[str, str, str]]:
    """(sort of sample, style key, text) for what the drawing uses."""
    kinds = {box.node.kind for box in layout.nodes}
    items = [("node", kind, name) for kind, name in KIND_NAMES.items() if kind in kinds]
    edge_kinds = {route.edge.kind for route in layout.edges}
    items += [("edge", kind, name) for kind, name in EDGE_NAMES.items() if kind in edge_kinds]
    if layout.diagram.thread_id is not None:
        items.append(("edge", "taken", "path taken (times)"))
    return items


def _legend(items: list[tuple[str, str, str]], width: float, top: float) -> tuple[list[str], float]:
    """The legend rows below the drawing; returns the elements and the height used."""
    out = ['<g class="fg-legend">']
    x, y = MARGIN, top
    for sort, key, text in items:
        item_w = 34 + text_width(text, SMALL_FONT_SIZE) + 16
        if x > MARGIN and x + item_w > width - MARGIN:
            x, y = MARGIN, y + 22
        if sort == "node":
            fill, stroke, _ = KIND_STYLE[key]
            box = NodeBox(DiagramNode(key, key, key), x + 13, y + 8, 26, 16, 0)
            out += _shape(key, box, fill, stroke, 1.2)
        else:
            colour, dash, line = EDGE_STYLE.get(key, (ACCENT, None, 2.4))
            dashes = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(
                f'<path d="M{_n(x)},{_n(y + 8)} L{_n(x + 24)},{_n(y + 8)}" stroke="{colour}" '
                f'stroke-width="{_n(line)}"{dashes} marker-end="url(#fg-arrow-{key})"/>'
            )
        out.append(
            f'<text x="{_n(x + 32)}" y="{_n(y + 8 + SMALL_FONT_SIZE * 0.35)}" '
            f'font-size="{_n(SMALL_FONT_SIZE)}" fill="#475569">{escape(text, quote=False)}</text>'
        )
        x += item_w
    out.append("</g>")
    return out, (y - top + 22) if items else 0.0


def layout_svg(layout: Layout, *, standalone: bool = True) -> str:
    """The SVG of a computed layout; `standalone=False` leaves out the XML prolog and xmlns.

    The inline form is for HTML pages, where the namespace is implied and no
    URL-looking string should appear.
    """
    diagram = layout.diagram
    overlay = diagram.thread_id is not None
    subtitle = f"path of thread {diagram.thread_id}" if overlay else ""
    header = TITLE_SIZE + 12 + (18 if subtitle else 0)
    legend_items = _legend_items(layout)
    content_w = max(
        layout.width,
        text_width(diagram.title, TITLE_SIZE),
        text_width(subtitle, 12.0),
        min(360.0, sum(34 + text_width(t, SMALL_FONT_SIZE) + 16 for *_, t in legend_items)),
    )
    width = content_w + 2 * MARGIN
    legend, legend_h = _legend(legend_items, width, MARGIN + header + layout.height + 24)
    height = MARGIN + header + layout.height + (24 + legend_h if legend_items else 0) + MARGIN
    dx = MARGIN + (content_w - layout.width) / 2
    dy = MARGIN + header
    namespace = ' xmlns="http://www.w3.org/2000/svg"' if standalone else ""
    out = ['<?xml version="1.0" encoding="UTF-8"?>'] if standalone else []
    out.append(
        f'<svg{namespace} class="fg-diagram" width="{_n(width)}" height="{_n(height)}" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" role="img" '
        f'aria-label="{escape(diagram.title)}" font-family="{FONT_FAMILY}">'
    )
    out.append(f"<title>{escape(diagram.title, quote=False)}</title>")
    out += _markers()
    out.append(f'<rect width="{_n(width)}" height="{_n(height)}" fill="#ffffff"/>')
    out.append(
        f'<text x="{_n(MARGIN)}" y="{_n(MARGIN + TITLE_SIZE)}" font-size="{_n(TITLE_SIZE)}" '
        f'font-weight="600" fill="#0f172a">{escape(diagram.title, quote=False)}</text>'
    )
    if subtitle:
        out.append(
            f'<text x="{_n(MARGIN)}" y="{_n(MARGIN + TITLE_SIZE + 20)}" font-size="12" '
            f'fill="{ACCENT_TEXT}">{escape(subtitle, quote=False)}</text>'
        )
    out.append(f'<g class="fg-graph" transform="translate({_n(dx)},{_n(dy)})">')
    out.append('<g class="fg-clusters">')
    for cluster in layout.clusters:
        r = cluster.rect
        fill = ("#f8fafc", "#f1f5f9", "#e2e8f0")[min(cluster.depth, 2)]
        out += [
            f'<g class="fg-cluster" data-cluster="{escape(cluster.id)}">',
            f'<rect x="{_n(r.x)}" y="{_n(r.y)}" width="{_n(r.width)}" height="{_n(r.height)}" '
            f'rx="8" fill="{fill}" stroke="#94a3b8" stroke-width="1.2"/>',
            f'<text x="{_n(r.x + 10)}" y="{_n(r.y + 16)}" font-size="12" font-weight="600" '
            f'fill="#334155">{escape(cluster.label, quote=False)}</text>',
            "</g>",
        ]
    out.append("</g>")
    out.append('<g class="fg-edges">')
    for i, route in enumerate(layout.edges):
        out += _edge(i, route, overlay)
    out.append("</g>")
    out.append('<g class="fg-nodes">')
    for i, box in enumerate(layout.nodes):
        out += _node(i, box, overlay)
    out.append("</g>")
    out.append('<g class="fg-edge-labels">')
    for i, route in enumerate(layout.edges):
        out += _edge_label(i, route, overlay)
    out.append("</g>")
    out.append("</g>")
    out += legend
    out.append("</svg>")
    return "\n".join(out) + "\n"


def diagram_svg(diagram: Diagram, *, standalone: bool = True) -> str:
    """Lay the diagram out and write it as SVG."""
    return layout_svg(layout_diagram(diagram), standalone=standalone)
