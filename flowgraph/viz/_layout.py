"""A layered layout of a diagram, computed in pure Python so `.svg` needs nothing native.

The steps are the classic ones for drawing flows (Sugiyama et al.):

1. Back edges: a depth-first walk from START, following edges in the order
   they were added, marks every edge into a node still on the walk's stack
   (the ReAct loop `tools -> agent`). Those are drawn around the side; the
   rest is a DAG.
2. Ranks: the longest path from START in that DAG (networkx's topological
   order), with END alone on the last rank, so the flow reads top to bottom.
3. Order: an edge spanning several ranks gets one waypoint per rank; a few
   barycenter sweeps down and up reduce crossings, keeping the ordering
   with the fewest, and the members of a cluster side by side.
4. Positions: x from the neighbours' mean, kept apart by the average of a
   left-packed and a right-packed placement (both feasible, so their mean
   is); boxes sized from the label (wide CJK characters count double);
   cluster boxes kept clear of everything else by difference constraints
   solved as longest paths; long edges straightened where there is room.
5. Routes: smooth curves through the waypoints, ports spread over a box's
   side, back edges in lanes beside everything they pass, labels placed in
   the gaps between ranks where they cover no box and no other label.

Everything is deterministic: the same diagram gives the same numbers.
"""

from __future__ import annotations

from flowgraph.viz._geometry import (
    CLUSTER_LABEL,
    CLUSTER_PAD,
    TIMES,
    ClusterBox,
    EdgeRoute,
    Layout,
    NodeBox,
    Point,
    Rect,
    edge_label,
    node_lines,
    text_width,
)
from flowgraph.viz._layered import Work, assign_x, assign_y, build, choose_sides, order, y_of
from flowgraph.viz._model import Diagram
from flowgraph.viz._routes import (
    Routes,
    cluster_boxes,
    item_rect,
    label_forward,
    route_back,
    route_forward,
    route_loops,
)

__all__ = [
    "TIMES",
    "ClusterBox",
    "EdgeRoute",
    "Layout",
    "NodeBox",
    "Point",
    "Rect",
    "edge_label",
    "layout_diagram",
    "node_lines",
    "text_width",
]


def layout_diagram(diagram: Diagram) -> Layout:
    """Place every node, route every edge and box every cluster; deterministic."""
    if not diagram.nodes:
        return Layout(diagram, 0.0, 0.0, (), (), (), 0)
    work = build(diagram)
    order(work)
    choose_sides(work)
    assign_x(work)
    assign_y(work)
    routes = Routes()
    routes.taken += [item_rect(work, it) for it in work.items if it.node is not None]
    route_forward(work, routes)
    route_back(work, routes)
    route_loops(work, routes)
    routes.taken += [
        Rect(c.rect.x, c.rect.y, c.rect.width, CLUSTER_LABEL + CLUSTER_PAD / 2)
        for c in cluster_boxes(work, routes)
    ]
    label_forward(work, routes)
    return _finish(work, routes, cluster_boxes(work, routes))


def _finish(work: Work, routes: Routes, clusters: list[ClusterBox]) -> Layout:
    """Shift everything so the drawing starts at (0, 0) and measure it."""
    rects = [item_rect(work, it) for it in work.items if it.node is not None]
    rects += [c.rect for c in clusters] + list(routes.labels.values())
    xs = [r.x for r in rects] + [p[0] for ps in routes.points.values() for p in ps]
    ys = [r.y for r in rects] + [p[1] for ps in routes.points.values() for p in ps]
    x2 = [r.x + r.width for r in rects] + [p[0] for ps in routes.points.values() for p in ps]
    y2 = [r.y + r.height for r in rects] + [p[1] for ps in routes.points.values() for p in ps]
    dx, dy = round(-min(xs), 1), round(-min(ys), 1)

    def move(r: Rect) -> Rect:
        return Rect(_r(r.x + dx), _r(r.y + dy), _r(r.width), _r(r.height))

    nodes = tuple(
        NodeBox(
            work.diagram.nodes[it.node],
            _r(it.x + dx),
            _r(y_of(work, it) + dy),
            _r(it.width),
            _r(it.height),
            it.rank,
        )
        for it in work.items
        if it.node is not None
    )
    edges = []
    for e, edge in enumerate(work.diagram.edges):
        label = routes.labels.get(e)
        edges.append(
            EdgeRoute(
                edge,
                tuple((_r(x + dx), _r(y + dy)) for x, y in routes.points[e]),
                routes.shapes[e],
                e in work.back,
                edge_label(edge),
                move(label) if label is not None else None,
            )
        )
    boxes = tuple(ClusterBox(c.id, c.label, move(c.rect), c.depth) for c in clusters)
    return Layout(
        work.diagram,
        _r(max(x2) + dx),
        _r(max(y2) + dy),
        nodes,
        tuple(edges),
        boxes,
        len(work.layers),
    )


def _r(value: float) -> float:
    """Round to a tenth of a pixel, so output does not depend on float noise."""
    return round(value + 0.0, 1) + 0.0
