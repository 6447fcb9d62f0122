"""Ranks, order and positions of a layered layout (the first four steps in `_layout`).

Works on a mutable scratch `Work`: one `Item` per node and per waypoint of
an edge that spans several ranks, the ranks as lists of items left to
right, and which edges are back edges and on which side they will run.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from flowgraph.viz._geometry import (
    CLUSTER_LABEL,
    CLUSTER_PAD,
    DUMMY_GAP,
    END_ID,
    LABEL_PAD_X,
    LANE_GAP,
    LANE_STEP,
    LOOP_REACH,
    NODE_GAP,
    RANK_GAP,
    SMALL_FONT_SIZE,
    START_ID,
    edge_label,
    node_size,
    text_width,
)
from flowgraph.viz._model import Diagram, DiagramEdge

__all__ = [
    "Item",
    "Work",
    "assign_x",
    "assign_y",
    "build",
    "choose_sides",
    "cluster_paths",
    "inside",
    "order",
    "y_of",
]

_SWEEPS = 8
"""Barycenter sweeps (alternating down and up) for the order, and again for x."""


@dataclass(slots=True)
class Item:
    """A node, or one waypoint of a long edge, on one rank."""

    rank: int
    width: float
    height: float
    clusters: tuple[str, ...]
    """The clusters it sits in, outermost first."""
    node: int | None = None
    edge: int | None = None
    x: float = 0.0
    right_extra: float = 0.0
    """Room kept right of the box for a self loop and its label."""
    up: list[int] = field(default_factory=list)
    down: list[int] = field(default_factory=list)


@dataclass(slots=True)
class Work:
    diagram: Diagram
    items: list[Item] = field(default_factory=list)
    layers: list[list[int]] = field(default_factory=list)
    chains: dict[int, list[int]] = field(default_factory=dict)
    """Forward edge index -> the items it passes, source to target."""
    back: list[int] = field(default_factory=list)
    loops: list[int] = field(default_factory=list)
    edge_paths: list[tuple[str, ...]] = field(default_factory=list)
    back_right: dict[int, bool] = field(default_factory=dict)
    """Back edge index -> routed on the right (else the left)."""
    cluster_keys: dict[str, float] = field(default_factory=dict)
    """Cluster -> its place among its siblings, the same on every rank."""
    reserves: dict[tuple[str, bool], float] = field(default_factory=dict)
    """(cluster, right side) -> room kept for the lanes of the cluster's own back edges."""
    rank_top: list[float] = field(default_factory=list)
    rank_height: list[float] = field(default_factory=list)


def cluster_paths(diagram: Diagram) -> dict[str, tuple[str, ...]]:
    parents = dict(diagram.cluster_parents)
    paths: dict[str, tuple[str, ...]] = {}
    for cluster, _ in diagram.clusters:
        chain = [cluster]
        while chain[-1] in parents and parents[chain[-1]] not in chain:
            chain.append(parents[chain[-1]])
        paths[cluster] = tuple(reversed(chain))
    return paths


def _split_edges(diagram: Diagram, index: dict[str, int]) -> tuple[list[int], list[int], list[int]]:
    """(forward, back, self-loop) edge indices from a DFS from START in insertion order."""
    out: list[list[tuple[int, int]]] = [[] for _ in diagram.nodes]
    for i, edge in enumerate(diagram.edges):
        out[index[edge.source]].append((i, index[edge.target]))
    state = [0] * len(diagram.nodes)  # 0 new, 1 on the stack, 2 done
    forward: list[int] = []
    back: list[int] = []
    loops: list[int] = []
    roots = [index[START_ID]] if START_ID in index else []
    roots += range(len(diagram.nodes))
    for root in roots:
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, iter(out[root]))]
        while stack:
            node, edges = stack[-1]
            step = next(edges, None)
            if step is None:
                state[node] = 2
                stack.pop()
                continue
            number, target = step
            if target == node:
                loops.append(number)
            elif state[target] == 1:
                back.append(number)
            else:
                forward.append(number)
                if state[target] == 0:
                    state[target] = 1
                    stack.append((target, iter(out[target])))
    return sorted(forward), sorted(back), sorted(loops)


def _ranks(diagram: Diagram, index: dict[str, int], forward: Sequence[int]) -> list[int]:
    import networkx as nx  # here, not at import: `import flowgraph` stays quick (cold resume)

    dag: nx.DiGraph[int] = nx.DiGraph()
    dag.add_nodes_from(range(len(diagram.nodes)))
    for i in forward:
        edge = diagram.edges[i]
        dag.add_edge(index[edge.source], index[edge.target])
    rank = [0] * len(diagram.nodes)
    for node in nx.lexicographical_topological_sort(dag):
        for succ in dag.successors(node):
            rank[succ] = max(rank[succ], rank[node] + 1)
    end = index.get(END_ID)
    if end is not None and len(rank) > 1:
        rank[end] = max(r for i, r in enumerate(rank) if i != end) + 1
    return rank


def common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    size = 0
    while size < min(len(a), len(b)) and a[size] == b[size]:
        size += 1
    return a[:size]


def build(diagram: Diagram) -> Work:
    index = {node.id: i for i, node in enumerate(diagram.nodes)}
    forward, back, loops = _split_edges(diagram, index)
    rank = _ranks(diagram, index, forward)
    paths = cluster_paths(diagram)
    work = Work(diagram, back=back, loops=loops)
    for i, node in enumerate(diagram.nodes):
        width, height = node_size(node)
        clusters = paths.get(node.cluster, (node.cluster,)) if node.cluster else ()
        work.items.append(Item(rank[i], width, height, clusters, node=i))
    for e in forward:
        edge = diagram.edges[e]
        source, target = index[edge.source], index[edge.target]
        inside = common_prefix(work.items[source].clusters, work.items[target].clusters)
        chain = [source]
        for r in range(rank[source] + 1, rank[target]):
            work.items.append(Item(r, 0.0, 0.0, inside, edge=e))
            chain.append(len(work.items) - 1)
        chain.append(target)
        for a, b in itertools.pairwise(chain):
            work.items[a].down.append(b)
            work.items[b].up.append(a)
        work.chains[e] = chain
    work.edge_paths = _edge_paths(work)
    for e in loops:
        item = work.items[index[diagram.edges[e].source]]
        text = edge_label(diagram.edges[e])
        label = text_width(text, SMALL_FONT_SIZE) + 2 * LABEL_PAD_X + 4 if text else 0.0
        item.right_extra = max(item.right_extra, LOOP_REACH + label)
    work.layers = [[] for _ in range(max(rank, default=0) + 1)]
    for i in _discovery_order(work):
        work.layers[work.items[i].rank].append(i)
    return work


def _discovery_order(work: Work) -> list[int]:
    """Items in the order a walk from the top meets them: the initial order of each rank."""
    seen: dict[int, None] = {}
    for start in range(len(work.items)):
        if start in seen or work.items[start].up:
            continue
        stack = [start]
        while stack:
            item = stack.pop()
            if item in seen:
                continue
            seen[item] = None
            stack.extend(reversed(work.items[item].down))
    for item in range(len(work.items)):
        seen.setdefault(item, None)
    return list(seen)


# -- ordering -------------------------------------------------------------------


def _crossings(work: Work) -> int:
    total = 0
    position = {item: i for layer in work.layers for i, item in enumerate(layer)}
    for layer in work.layers[:-1]:
        segments = [(position[a], position[b]) for a in layer for b in work.items[a].down]
        for i, (a1, b1) in enumerate(segments):
            for a2, b2 in segments[i + 1 :]:
                if (a1 - a2) * (b1 - b2) < 0:
                    total += 1
    return total


def _arrange(
    items: list[int],
    key: dict[int, float],
    work: Work,
    depth: int = 0,
    cluster_keys: dict[str, float] | None = None,
) -> list[int]:
    """Sort by key, keeping the members of each cluster (at every depth) together.

    A cluster's place is its members' mean key, or `cluster_keys[cluster]`
    when given (the same on every rank, so sibling boxes never swap sides).
    """
    groups: dict[str | int, list[int]] = {}
    for item in items:
        clusters = work.items[item].clusters
        groups.setdefault(clusters[depth] if len(clusters) > depth else item, []).append(item)

    def group_key(group: tuple[str | int, list[int]]) -> tuple[float, int]:
        name, members = group
        if isinstance(name, str) and cluster_keys is not None:
            return cluster_keys[name], items.index(members[0])
        return sum(key[m] for m in members) / len(members), items.index(members[0])

    ordered: list[int] = []
    for name, members in sorted(groups.items(), key=group_key):
        if isinstance(name, str):
            ordered += _arrange(members, key, work, depth + 1, cluster_keys)
        else:
            ordered += members
    return ordered


def _align_clusters(work: Work) -> None:
    """Put sibling clusters in one left-to-right order on every rank (by mean position)."""
    if not work.diagram.clusters:
        return
    position = {
        item: (i + 0.5) / len(layer) for layer in work.layers for i, item in enumerate(layer)
    }
    cluster_keys: dict[str, float] = {}
    for cluster, _ in work.diagram.clusters:
        spots = [position[i] for i, it in enumerate(work.items) if cluster in it.clusters]
        cluster_keys[cluster] = sum(spots) / len(spots) if spots else 0.5
    for r, layer in enumerate(work.layers):
        work.layers[r] = _arrange(layer, {i: position[i] for i in layer}, work, 0, cluster_keys)
    work.cluster_keys = cluster_keys


def order(work: Work) -> None:
    """Barycenter sweeps down and up; keeps the order with the fewest crossings."""
    for r, layer in enumerate(work.layers):
        # even the starting order keeps each cluster's members together
        work.layers[r] = _arrange(layer, {item: float(i) for i, item in enumerate(layer)}, work)
    best = [list(layer) for layer in work.layers]
    best_count = _crossings(work)
    for sweep in range(_SWEEPS):
        downward = sweep % 2 == 0
        ranks = range(1, len(work.layers)) if downward else range(len(work.layers) - 2, -1, -1)
        for r in ranks:
            neighbour_layer = work.layers[r - 1] if downward else work.layers[r + 1]
            position = {item: i for i, item in enumerate(neighbour_layer)}
            key: dict[int, float] = {}
            layer = work.layers[r]
            scale = len(neighbour_layer) / max(len(layer), 1)
            for i, item in enumerate(layer):
                links = work.items[item].up if downward else work.items[item].down
                key[item] = sum(position[n] for n in links) / len(links) if links else i * scale
            work.layers[r] = _arrange(layer, key, work)
        count = _crossings(work)
        if count < best_count:
            best, best_count = [list(layer) for layer in work.layers], count
    work.layers = best
    _align_clusters(work)


def _edge_paths(work: Work) -> list[tuple[str, ...]]:
    """For every edge, the clusters holding both its ends (outermost first)."""
    index = {node.id: i for i, node in enumerate(work.diagram.nodes)}
    return [
        common_prefix(work.items[index[e.source]].clusters, work.items[index[e.target]].clusters)
        for e in work.diagram.edges
    ]


def choose_sides(work: Work) -> None:
    """Route each back edge on the side where its ends sit at the edge of their ranks."""
    index = {node.id: i for i, node in enumerate(work.diagram.nodes)}
    for e in work.back:
        edge = work.diagram.edges[e]
        spots = []
        for name in (edge.source, edge.target):
            layer = work.layers[work.items[index[name]].rank]
            spots.append((layer.index(index[name]), len(layer)))
        on_right = all(pos == size - 1 for pos, size in spots)
        on_left = all(pos == 0 for pos, _ in spots)
        if on_right != on_left:
            work.back_right[e] = on_right
        else:
            work.back_right[e] = sum((pos + 0.5) / size for pos, size in spots) / 2 >= 0.5
    for cluster, _ in work.diagram.clusters:
        for right in (True, False):
            work.reserves[(cluster, right)] = _reserve(work, cluster, right)


def lane_width(edge: DiagramEdge) -> float:
    text = edge_label(edge)
    label = text_width(text, SMALL_FONT_SIZE) + 2 * LABEL_PAD_X if text else 0.0
    return LANE_GAP + LANE_STEP + label


def _reserve(work: Work, cluster: str, right: bool) -> float:
    """Room kept beside a cluster's nodes for the lanes of its own back edges."""
    return sum(
        lane_width(work.diagram.edges[e])
        for e in work.back
        if work.back_right[e] == right and cluster in work.edge_paths[e]
    )


def inside(path: tuple[str, ...], outer: tuple[str, ...]) -> bool:
    return path[: len(outer)] == outer


# -- coordinates ----------------------------------------------------------------


def _separation(work: Work, a: Item, b: Item) -> float:
    """How far right of `a`'s center `b`'s center must be: boxes, the cluster borders
    between them (with their back-edge lanes) and a gap."""
    dummy = a.node is None or b.node is None
    distance = (a.width + b.width) / 2 + a.right_extra + (DUMMY_GAP if dummy else NODE_GAP)
    shared = len(common_prefix(a.clusters, b.clusters))
    for cluster in a.clusters[shared:]:
        distance += CLUSTER_PAD + work.reserves.get((cluster, True), 0.0)
    for cluster in b.clusters[shared:]:
        distance += CLUSTER_PAD + work.reserves.get((cluster, False), 0.0)
    return distance


def _place(work: Work, layer: list[int], desired: list[float]) -> None:
    items = [work.items[i] for i in layer]
    left = list(desired)
    for i in range(1, len(items)):
        left[i] = max(left[i], left[i - 1] + _separation(work, items[i - 1], items[i]))
    right = list(desired)
    for i in range(len(items) - 2, -1, -1):
        right[i] = min(right[i], right[i + 1] - _separation(work, items[i], items[i + 1]))
    for item, a, b in zip(items, left, right, strict=True):
        item.x = (a + b) / 2


def assign_x(work: Work) -> None:
    """x of every item: packed, pulled toward neighbours, clusters cleared, long edges straight."""
    for layer in work.layers:
        cursor = 0.0
        for i, item in enumerate(layer):
            if i:
                cursor += _separation(work, work.items[layer[i - 1]], work.items[item])
            work.items[item].x = cursor
        shift = cursor / 2
        for item in layer:
            work.items[item].x -= shift
    for sweep in range(_SWEEPS):
        downward = sweep % 2 == 0
        ranks = range(len(work.layers)) if downward else range(len(work.layers) - 1, -1, -1)
        for r in ranks:
            layer = work.layers[r]
            desired = []
            for item in layer:
                it = work.items[item]
                links = it.up if downward else it.down
                if sweep >= _SWEEPS - 2:
                    links = it.up + it.down
                xs = [work.items[n].x for n in links]
                desired.append(sum(xs) / len(xs) if xs else it.x)
            _place(work, layer, desired)
    if work.diagram.clusters and not _separate_clusters(work):
        for _ in range(2):
            for cluster, _label in work.diagram.clusters:
                _clear_cluster(work, cluster)
    _straighten(work)
    for placed in work.items:
        placed.x = round(placed.x, 1)


def _fits(work: Work, item: int, x: float) -> bool:
    """Whether `item` can move to `x` without coming too close to its neighbours in the rank."""
    layer = work.layers[work.items[item].rank]
    k = layer.index(item)
    it = work.items[item]
    if k > 0:
        left = work.items[layer[k - 1]]
        if x - left.x < _separation(work, left, it):
            return False
    if k + 1 < len(layer):
        right = work.items[layer[k + 1]]
        if right.x - x < _separation(work, it, right):
            return False
    return True


def _straighten(work: Work) -> None:
    """Line up the waypoints of each long edge on one x where the ranks leave room for it."""
    for chain in work.chains.values():
        waypoints = chain[1:-1]
        if len(waypoints) < 2:
            continue
        xs = sorted(work.items[i].x for i in waypoints)
        for x in (xs[len(xs) // 2], xs[0], xs[-1]):
            if all(_fits(work, i, x) for i in waypoints):
                for i in waypoints:
                    work.items[i].x = x
                break


def _separate_clusters(work: Work) -> bool:
    """Keep every cluster's box clear of what is not in it, moving things right as needed.

    Each item beside a cluster, on a rank the cluster spans, gets a side (by
    its place in the rank, or by x on a rank without members) and becomes a
    difference constraint against every member: x_right >= x_left + clearance.
    Together with the in-rank separations, that system is solved from the
    current positions by pushing right until nothing is violated (longest
    paths). Returns False, leaving x as it was, if the sides contradict each
    other (a cycle), which the caller then handles with a simpler push.
    """
    constraints: dict[tuple[int, int], float] = {}
    paths = cluster_paths(work.diagram)
    rank_of = {name: k for k, (name, _) in enumerate(work.diagram.clusters)}
    for layer in work.layers:
        for a, b in itertools.pairwise(layer):
            constraints[(a, b)] = _separation(work, work.items[a], work.items[b])
    everyone = {
        name: [i for i, it in enumerate(work.items) if name in it.clusters]
        for name, _ in work.diagram.clusters
    }
    for cluster, _ in work.diagram.clusters:
        members = everyone[cluster]
        if not members:
            continue
        member_set = set(members)
        center = sum(work.items[i].x for i in members) / len(members)
        ranks = [work.items[i].rank for i in members]
        for r in range(min(ranks), max(ranks) + 1):
            layer = work.layers[r]
            spots = [k for k, item in enumerate(layer) if item in member_set]
            for k, other in enumerate(layer):
                if other in member_set:
                    continue
                depth = len(paths[cluster]) - 1
                around = work.items[other].clusters
                others = [other]
                if len(around) > depth and around[:depth] == paths[cluster][:depth]:
                    # in a sibling cluster: its whole box goes to the side the sibling order gives
                    sibling = around[depth]
                    mine = (work.cluster_keys.get(cluster, 0.5), rank_of[cluster])
                    right = (work.cluster_keys.get(sibling, 0.5), rank_of[sibling]) > mine
                    others = everyone[sibling]
                elif spots:
                    right = k > spots[-1]
                else:
                    right = work.items[other].x >= center
                for m, o in itertools.product(members, others):
                    pair = (m, o) if right else (o, m)
                    need = _separation(work, work.items[pair[0]], work.items[pair[1]])
                    constraints[pair] = max(constraints.get(pair, need), need)
    x = [it.x for it in work.items]
    for _ in range(len(x) + 1):
        moved = False
        for (a, b), need in constraints.items():
            if x[b] < x[a] + need - 1e-6:
                x[b] = x[a] + need
                moved = True
        if not moved:
            for item, value in zip(work.items, x, strict=True):
                item.x = value
            return True
    return False


def _clear_cluster(work: Work, cluster: str) -> None:
    """Move what is not in `cluster` out of the band its box covers, on every rank it spans."""
    members = [i for i, it in enumerate(work.items) if cluster in it.clusters]
    if not members:
        return
    pad = CLUSTER_PAD * (1 + _nesting_below(work, cluster, members))
    left = min(work.items[i].x - work.items[i].width / 2 for i in members) - pad
    left -= _reserve(work, cluster, right=False)
    right = (
        max(work.items[i].x + work.items[i].width / 2 + work.items[i].right_extra for i in members)
        + pad
    )
    right += _reserve(work, cluster, right=True)
    center = (left + right) / 2
    ranks = {work.items[i].rank for i in members}
    for r in range(min(ranks), max(ranks) + 1):
        layer = work.layers[r]
        inside = [k for k, item in enumerate(layer) if cluster in work.items[item].clusters]
        if inside:
            before = layer[: inside[0]]
            after = layer[inside[-1] + 1 :]
        else:
            before = [i for i in layer if work.items[i].x < center]
            after = [i for i in layer if work.items[i].x >= center]
        if before:
            last = work.items[before[-1]]
            overlap = last.x + last.width / 2 + DUMMY_GAP - left
            if overlap > 0:
                for i in before:
                    work.items[i].x -= overlap
        if after:
            first = work.items[after[0]]
            overlap = right + DUMMY_GAP - (first.x - first.width / 2)
            if overlap > 0:
                for i in after:
                    work.items[i].x += overlap


def _nesting_below(work: Work, cluster: str, members: Iterable[int]) -> int:
    """How many clusters deep the members go inside `cluster`."""
    deepest = 0
    for i in members:
        path = work.items[i].clusters
        deepest = max(deepest, len(path) - path.index(cluster) - 1)
    return deepest


def assign_y(work: Work) -> None:
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    for cluster, _ in work.diagram.clusters:
        ranks = [it.rank for it in work.items if cluster in it.clusters and it.node is not None]
        if ranks:
            starts[min(ranks)] = starts.get(min(ranks), 0) + 1
            ends[max(ranks)] = ends.get(max(ranks), 0) + 1
    y = 0.0
    for r, layer in enumerate(work.layers):
        if r:
            y += RANK_GAP + ends.get(r - 1, 0) * CLUSTER_PAD
            y += starts.get(r, 0) * (CLUSTER_PAD + CLUSTER_LABEL)
        elif starts.get(0):
            y += starts[0] * (CLUSTER_PAD + CLUSTER_LABEL)
        height = max((work.items[i].height for i in layer), default=0.0)
        work.rank_top.append(y)
        work.rank_height.append(height)
        y += height


def y_of(work: Work, item: Item) -> float:
    return work.rank_top[item.rank] + work.rank_height[item.rank] / 2
