"""Edge routes, label places and cluster boxes, once every item has its position.

Forward edges run as S-curves through their waypoints from spread ports on
the bottom of the source to the top of the target. Back edges run in lanes
beside everything on the ranks they pass (inside their own cluster's box,
outside nested ones); self loops hook off the right side. Labels go where
they cover no box, no cluster title and no other label.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from flowgraph.viz._geometry import (
    CLUSTER_LABEL,
    CLUSTER_PAD,
    LABEL_HEIGHT,
    LABEL_PAD_X,
    LANE_GAP,
    LANE_STEP,
    LOOP_REACH,
    RANK_GAP,
    SMALL_FONT_SIZE,
    ClusterBox,
    Point,
    Rect,
    edge_label,
    text_width,
)
from flowgraph.viz._layered import Item, Work, cluster_paths, inside, y_of

__all__ = [
    "Routes",
    "cluster_boxes",
    "item_rect",
    "label_forward",
    "route_back",
    "route_forward",
    "route_loops",
]


def _ports(work: Work, links: list[int], width: float) -> list[float]:
    """Offsets spreading the edges leaving (or entering) one side of a box, by where they go."""
    ordered = sorted(range(len(links)), key=lambda k: (work.items[links[k]].x, k))
    count = len(ordered)
    offsets = [0.0] * count
    if count > 1:
        spread = min(16.0, (width * 0.6) / (count - 1))
        for rank, k in enumerate(ordered):
            offsets[k] = (rank - (count - 1) / 2) * spread
    return offsets


@dataclass(slots=True)
class Routes:
    points: dict[int, list[Point]] = field(default_factory=dict)
    shapes: dict[int, str] = field(default_factory=dict)
    labels: dict[int, Rect] = field(default_factory=dict)
    taken: list[Rect] = field(default_factory=list)


def route_forward(work: Work, routes: Routes) -> None:
    offsets_out: dict[tuple[int, int], float] = {}
    offsets_in: dict[tuple[int, int], float] = {}
    for node, item in enumerate(work.items):
        if item.node is None:
            continue
        downs = [(e, chain[1]) for e, chain in work.chains.items() if chain[0] == node]
        ups = [(e, chain[-2]) for e, chain in work.chains.items() if chain[-1] == node]
        for (e, _), dx in zip(downs, _ports(work, [n for _, n in downs], item.width), strict=True):
            offsets_out[(node, e)] = dx
        for (e, _), dx in zip(ups, _ports(work, [n for _, n in ups], item.width), strict=True):
            offsets_in[(node, e)] = dx
    for e, chain in work.chains.items():
        src, dst = work.items[chain[0]], work.items[chain[-1]]
        points: list[Point] = [
            (src.x + _ordered_offset(offsets_out, chain[0], e), y_of(work, src) + src.height / 2)
        ]
        points += [(work.items[i].x, y_of(work, work.items[i])) for i in chain[1:-1]]
        points.append(
            (dst.x + _ordered_offset(offsets_in, chain[-1], e), y_of(work, dst) - dst.height / 2)
        )
        routes.points[e] = points
        routes.shapes[e] = "curve"


def _ordered_offset(offsets: dict[tuple[int, int], float], node: int, edge: int) -> float:
    return offsets.get((node, edge), 0.0)


def _side_extent(
    work: Work, low: int, high: int, right: bool, outer: tuple[str, ...], boxes: Sequence[Rect]
) -> float:
    """The outermost x, on one side, of what lies on ranks low..high inside `outer`."""
    values = []
    for r in range(low, high + 1):
        for i in work.layers[r]:
            it = work.items[i]
            if inside(it.clusters, outer):
                values.append(
                    it.x + it.width / 2 + it.right_extra if right else it.x - it.width / 2
                )
    top, bottom = work.rank_top[low], work.rank_top[high] + work.rank_height[high]
    for box in boxes:
        if box.y < bottom and box.y + box.height > top:
            values.append(box.x + box.width if right else box.x)
    return max(values) if right else min(values)


def _side_ports(work: Work) -> dict[tuple[int, int], float]:
    """Vertical offsets of back edges sharing one side of one box, so they do not overlap."""
    index = {node.id: i for i, node in enumerate(work.diagram.nodes)}
    users: dict[tuple[int, bool], list[tuple[int, int]]] = {}
    for e in work.back:
        edge = work.diagram.edges[e]
        for end in (index[edge.source], index[edge.target]):
            users.setdefault((end, work.back_right[e]), []).append((e, end))
    offsets: dict[tuple[int, int], float] = {}
    for members in users.values():
        for k, key in enumerate(members):
            offsets[key] = (k - (len(members) - 1) / 2) * 8.0
    return offsets


def route_back(work: Work, routes: Routes) -> None:
    index = {node.id: i for i, node in enumerate(work.diagram.nodes)}
    paths = cluster_paths(work.diagram)
    ports = _side_ports(work)
    lanes: list[tuple[bool, int, int, float, float, tuple[str, ...]]] = []

    def span(e: int) -> int:
        edge = work.diagram.edges[e]
        return work.items[index[edge.source]].rank - work.items[index[edge.target]].rank

    for e in sorted(work.back, key=lambda e: (-len(work.edge_paths[e]), span(e), e)):
        edge = work.diagram.edges[e]
        outer = work.edge_paths[e]
        s, d = index[edge.source], index[edge.target]
        src, dst = work.items[s], work.items[d]
        low, high = dst.rank, src.rank
        right = work.back_right[e]
        sign = 1.0 if right else -1.0
        boxes = [
            box.rect
            for box in cluster_boxes(work, routes)
            if len(paths[box.id]) > len(outer) and inside(paths[box.id], outer)
        ]
        x = _side_extent(work, low, high, right, outer, boxes) + sign * LANE_GAP
        text = edge_label(edge)
        label_w = text_width(text, SMALL_FONT_SIZE) + 2 * LABEL_PAD_X if text else 0.0
        for other_right, other_low, other_high, other_x, other_w, other_outer in lanes:
            if other_right == right and other_low <= high and low <= other_high:
                if inside(other_outer, outer):
                    step = LANE_STEP + other_w
                    x = max(x, other_x + step) if right else min(x, other_x - step)
        lanes.append((right, low, high, x, label_w, outer))
        sy, dy = y_of(work, src) + ports[(e, s)], y_of(work, dst) + ports[(e, d)]
        src_layer, dst_layer = work.layers[src.rank], work.layers[dst.rank]
        src_edge = src_layer[-1 if right else 0] == s
        dst_edge = dst_layer[-1 if right else 0] == d
        points: list[Point] = []
        if src_edge:
            points += [(src.x + sign * src.width / 2, sy), (x, sy)]
        else:
            gap_y = y_of(work, src) + src.height / 2 + RANK_GAP * 0.3
            points += [(src.x, sy + src.height / 2), (src.x, gap_y), (x, gap_y)]
        if dst_edge:
            points += [(x, dy), (dst.x + sign * dst.width / 2, dy)]
        else:
            gap_y = y_of(work, dst) - dst.height / 2 - RANK_GAP * 0.3
            points += [(x, gap_y), (dst.x, gap_y), (dst.x, y_of(work, dst) - dst.height / 2)]
        routes.points[e] = points
        routes.shapes[e] = "lane"
        if text:
            mid = (y_of(work, src) + y_of(work, dst)) / 2
            lx = x + LABEL_PAD_X if right else x - LABEL_PAD_X - label_w
            rect = Rect(lx, mid - LABEL_HEIGHT / 2, label_w, LABEL_HEIGHT)
            routes.labels[e] = rect
            routes.taken.append(rect)


def route_loops(work: Work, routes: Routes) -> None:
    index = {node.id: i for i, node in enumerate(work.diagram.nodes)}
    for e in work.loops:
        item = work.items[index[work.diagram.edges[e].source]]
        y = y_of(work, item)
        right = item.x + item.width / 2
        reach = right + LOOP_REACH
        routes.points[e] = [(right, y - 8), (reach, y - 8), (reach, y + 8), (right, y + 8)]
        routes.shapes[e] = "lane"
        text = edge_label(work.diagram.edges[e])
        if text:
            width = text_width(text, SMALL_FONT_SIZE) + 2 * LABEL_PAD_X
            rect = Rect(reach + 4, y - LABEL_HEIGHT / 2, width, LABEL_HEIGHT)
            routes.labels[e] = rect
            routes.taken.append(rect)


def label_forward(work: Work, routes: Routes) -> None:
    """Put each forward edge's label in a gap between ranks, clear of boxes and other labels."""
    for e in sorted(work.chains):
        text = edge_label(work.diagram.edges[e])
        if not text:
            continue
        width = text_width(text, SMALL_FONT_SIZE) + 2 * LABEL_PAD_X
        points = routes.points[e]
        candidates: list[Point] = []
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            for t in (0.5, 0.3, 0.7):
                # the S-curve's point at parameter t (controls at mid height)
                u = 3 * t * t - 2 * t * t * t
                candidates.append((x0 + (x1 - x0) * u, y0 + (y1 - y0) * t))
        chosen: Rect | None = None
        for nudge in (0.0, 1.0, -1.0, 2.0, -2.0):
            for cx, cy in candidates:
                rect = Rect(
                    cx - width / 2 + nudge * (width / 2 + 6),
                    cy - LABEL_HEIGHT / 2,
                    width,
                    LABEL_HEIGHT,
                )
                if not any(rect.overlaps(other, 2.0) for other in routes.taken):
                    chosen = rect
                    break
            if chosen is not None:
                break
        if chosen is None:
            # a crowded gap: the nearest free place to the right of the edge's midpoint
            cx, cy = candidates[0]
            chosen = Rect(cx - width / 2, cy - LABEL_HEIGHT / 2, width, LABEL_HEIGHT)
            while any(chosen.overlaps(other, 2.0) for other in routes.taken):
                blocking = max(o.x + o.width for o in routes.taken if chosen.overlaps(o, 2.0))
                chosen = Rect(blocking + 4.0, chosen.y, width, LABEL_HEIGHT)
        routes.labels[e] = chosen
        routes.taken.append(chosen)


def cluster_boxes(work: Work, routes: Routes) -> list[ClusterBox]:
    """Each cluster's box: its nodes, the routes and labels of its own edges, nested boxes."""
    paths = cluster_paths(work.diagram)
    boxes: dict[str, Rect] = {}
    # innermost first, so an outer box wraps the inner ones
    for cluster, _ in sorted(work.diagram.clusters, key=lambda c: -len(paths[c[0]])):
        rects = [
            item_rect(work, it)
            for it in work.items
            if it.node is not None and cluster in it.clusters
        ]
        if not rects:
            continue
        rects += [box for name, box in boxes.items() if cluster in paths[name][:-1]]
        for e, points in routes.points.items():
            if cluster in work.edge_paths[e]:
                rects += [Rect(x, y, 0.0, 0.0) for x, y in points]
                if e in routes.labels:
                    rects.append(routes.labels[e])
        left = min(r.x for r in rects) - CLUSTER_PAD
        top = min(r.y for r in rects) - CLUSTER_PAD - CLUSTER_LABEL
        right = max(r.x + r.width for r in rects) + CLUSTER_PAD
        bottom = max(r.y + r.height for r in rects) + CLUSTER_PAD
        boxes[cluster] = Rect(left, top, right - left, bottom - top)
    labels = dict(work.diagram.clusters)
    return [
        ClusterBox(name, labels[name], boxes[name], len(paths[name]) - 1)
        for name, _ in work.diagram.clusters
        if name in boxes
    ]


def item_rect(work: Work, item: Item) -> Rect:
    y = y_of(work, item)
    return Rect(item.x - item.width / 2, y - item.height / 2, item.width, item.height)
