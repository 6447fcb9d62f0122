"""The layered layout: ranks along the flow, back edges beside it, nothing drawn over a box."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from flowgraph import CompiledGraph
from flowgraph.viz import Diagram, DiagramEdge, DiagramNode, build_diagram
from flowgraph.viz._layout import Layout, NodeBox, Rect, layout_diagram, text_width

from .conftest import build_persona_app, build_react_app

START, END = "__start__", "__end__"


def by_id(layout: Layout) -> dict[str, NodeBox]:
    return {box.node.id: box for box in layout.nodes}


def diagram_of(edges: list[tuple[str, str]], kind: str = "direct") -> Diagram:
    names = list(dict.fromkeys(n for edge in edges for n in edge if n not in (START, END)))
    nodes = [DiagramNode(START, "START", "start")]
    nodes += [DiagramNode(n, n, "function") for n in names]
    nodes.append(DiagramNode(END, "END", "end"))
    return Diagram("test", tuple(nodes), tuple(DiagramEdge(a, b, kind) for a, b in edges))


def assert_no_overlaps(layout: Layout) -> None:
    for a, b in itertools.combinations(layout.nodes, 2):
        assert not a.rect.overlaps(b.rect), (a.node.id, b.node.id)
    for route in layout.edges:
        if route.label_rect is None:
            continue
        for box in layout.nodes:
            assert not route.label_rect.overlaps(box.rect), (route.label, box.node.id)
    labels = [r.label_rect for r in layout.edges if r.label_rect is not None]
    for a, b in itertools.combinations(labels, 2):
        assert not a.overlaps(b)


def test_react_agent_ranks_and_loop() -> None:
    layout = layout_diagram(build_diagram(build_react_app()))
    boxes = by_id(layout)
    assert [boxes[n].rank for n in (START, "agent", "tools", END)] == [0, 1, 2, 3]
    assert boxes[START].y < boxes["agent"].y < boxes["tools"].y < boxes[END].y
    (loop,) = [r for r in layout.edges if r.is_back]
    assert (loop.edge.source, loop.edge.target) == ("tools", "agent")
    assert loop.shape == "lane"
    # the lane runs beside both boxes, not through them
    lane_x = loop.points[1][0]
    for name in ("agent", "tools"):
        rect = boxes[name].rect
        assert lane_x < rect.x or lane_x > rect.x + rect.width
    forward = [r for r in layout.edges if not r.is_back]
    assert all(r.shape == "curve" for r in forward)
    # every forward edge starts at the bottom of its source and ends at the top of its target
    for route in forward:
        source, target = boxes[route.edge.source], boxes[route.edge.target]
        assert route.points[0][1] == source.rect.y + source.rect.height
        assert route.points[-1][1] == target.rect.y


def test_end_is_alone_on_the_last_rank() -> None:
    # "shortcut" goes straight to END, but END still sits below everything
    layout = layout_diagram(
        diagram_of(
            [
                (START, "a"),
                ("a", "b"),
                ("b", "c"),
                ("c", END),
                (START, "shortcut"),
                ("shortcut", END),
            ]
        )
    )
    boxes = by_id(layout)
    assert boxes[END].rank == layout.rank_count - 1
    assert [b for b in layout.nodes if b.rank == boxes[END].rank] == [boxes[END]]
    assert boxes["shortcut"].rank == 1  # longest path from START, not pushed down
    assert_no_overlaps(layout)


def test_barycenter_sweeps_remove_a_crossing() -> None:
    # the depth-first order puts c before d; a -> d with b -> c would cross
    layout = layout_diagram(
        diagram_of(
            [(START, "a"), (START, "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("c", END), ("d", END)]
        )
    )
    boxes = by_id(layout)
    assert boxes["a"].x < boxes["b"].x
    assert boxes["d"].x < boxes["c"].x


def test_labels_sit_between_ranks_clear_of_boxes(persona_app: CompiledGraph) -> None:
    layout = layout_diagram(build_diagram(persona_app))
    labelled = [r for r in layout.edges if r.edge.label]
    assert {r.label for r in labelled} == {"audit", "finish"}
    assert all(r.label_rect is not None for r in labelled)
    assert_no_overlaps(layout)


def test_no_overlaps_in_any_sample(sample_app: CompiledGraph) -> None:
    layout = layout_diagram(build_diagram(sample_app))
    assert len(layout.nodes) == len(build_diagram(sample_app).nodes)
    assert_no_overlaps(layout)
    for box in layout.nodes:
        # float noise aside, every box is on the canvas
        assert -0.01 < box.rect.x and box.rect.x + box.rect.width < layout.width + 0.01
        assert -0.01 < box.rect.y and box.rect.y + box.rect.height < layout.height + 0.01


def inside(inner: Rect, outer: Rect) -> bool:
    return (
        outer.x <= inner.x
        and outer.y <= inner.y
        and inner.x + inner.width <= outer.x + outer.width
        and inner.y + inner.height <= outer.y + outer.height
    )


def test_clusters_box_their_nodes_and_only_them(nested_app: CompiledGraph) -> None:
    diagram = build_diagram(nested_app)
    layout = layout_diagram(diagram)
    clusters = {c.id: c for c in layout.clusters}
    assert set(clusters) == {"team", "team:research"}
    assert inside(clusters["team:research"].rect, clusters["team"].rect)
    assert clusters["team:research"].depth == 1
    for box in layout.nodes:
        member = box.node.cluster or ""
        for name, cluster in clusters.items():
            if member == name or member.startswith(name + ":"):
                assert inside(box.rect, cluster.rect), (box.node.id, name)
            else:
                assert not box.rect.overlaps(cluster.rect), (box.node.id, name)
    # the inner loop's lane stays inside its own cluster
    (loop,) = [r for r in layout.edges if r.is_back]
    assert all(inside(Rect(x, y, 0, 0), clusters["team:research"].rect) for x, y in loop.points)


def test_node_width_follows_the_label_and_counts_wide_characters_double() -> None:
    assert text_width("问") > text_width("a") * 1.6
    assert text_width("问候问候") > text_width("abcd") * 1.6
    assert text_width("e\u0301") == text_width("e")  # a combining accent takes no room
    short, long, wide = (DiagramNode(n, n, "function") for n in ("a", "a" * 40, "问" * 20))
    diagram = Diagram("w", (short, long, wide), ())
    boxes = by_id(layout_diagram(diagram))
    assert boxes["a"].width < boxes["a" * 40].width
    assert boxes["问" * 20].width > text_width("问" * 20)


def test_same_diagram_same_layout() -> None:
    first = layout_diagram(build_diagram(build_persona_app()))
    second = layout_diagram(build_diagram(build_persona_app()))
    assert first == second


@st.composite
def random_diagrams(draw: st.DrawFn) -> Diagram:
    count = draw(st.integers(1, 9))
    names = [f"n{i}" for i in range(count)]
    pairs = st.tuples(st.sampled_from([START, *names]), st.sampled_from([*names, END]))
    edges = draw(st.lists(pairs, min_size=1, max_size=22, unique=True))
    kinds = st.sampled_from(["direct", "conditional", "command", "send"])
    labels = st.one_of(st.none(), st.text(min_size=1, max_size=8))
    nodes = [DiagramNode(START, "START", "start")]
    nodes += [DiagramNode(n, draw(st.text(min_size=1, max_size=14)), "function") for n in names]
    nodes.append(DiagramNode(END, "END", "end"))
    return Diagram(
        "random",
        tuple(nodes),
        tuple(DiagramEdge(a, b, draw(kinds), draw(labels)) for a, b in edges),
    )


@settings(max_examples=60, deadline=None)
@given(random_diagrams())
def test_any_graph_lays_out_without_overlaps(diagram: Diagram) -> None:
    layout = layout_diagram(diagram)
    assert_no_overlaps(layout)
    boxes = by_id(layout)
    assert boxes[START].rank == 0
    assert boxes[END].rank == layout.rank_count - 1
    for route in layout.edges:
        assert len(route.points) >= 2
        source, target = boxes[route.edge.source], boxes[route.edge.target]
        if not route.is_back and source is not target:
            assert source.rank < target.rank
    assert layout == layout_diagram(diagram)


@st.composite
def subgraph_diagrams(draw: st.DrawFn) -> Diagram:
    """Graphs whose clusters are built the way `build_diagram` builds subgraphs.

    A subgraph node is its cluster's entry; its inner nodes get ids
    `<node>:<inner>`; edges leaving the node leave from its exit
    `<node>:__end__`. Subgraphs nest up to two deep.
    """
    nodes: list[DiagramNode] = [DiagramNode(START, "START", "start")]
    edges: list[DiagramEdge] = []
    clusters: list[tuple[str, str]] = []
    parents: list[tuple[str, str]] = []
    kinds = st.sampled_from(["direct", "conditional", "command"])

    def graph(prefix: str, cluster: str | None, depth: int) -> None:
        names = [f"{prefix}n{i}" for i in range(draw(st.integers(1, 4)))]
        entry = cluster if cluster is not None else START
        end = prefix + END
        exits: dict[str, str] = {}
        for name in names:
            if depth < 2 and draw(st.integers(0, 3)) == 0:
                nodes.append(DiagramNode(name, name.rsplit(":", 1)[-1], "subgraph", name))
                clusters.append((name, name))
                if cluster is not None:
                    parents.append((name, cluster))
                graph(name + ":", name, depth + 1)
                exits[name] = name + ":" + END
            else:
                label = draw(st.text(min_size=1, max_size=10))
                nodes.append(DiagramNode(name, label, "function", cluster))
        pairs = draw(
            st.lists(
                st.tuples(st.sampled_from([entry, *names]), st.sampled_from([*names, end])),
                max_size=7,
                unique=True,
            )
        )
        # every node reachable from START, as compile() requires
        feeds = [(draw(st.sampled_from([entry, *names[:i]])), n) for i, n in enumerate(names)]
        for a, b in [*feeds, (names[-1], end), *pairs]:
            edge = DiagramEdge(exits.get(a, a), b, draw(kinds), draw(st.sampled_from([None, "go"])))
            if edge not in edges:
                edges.append(edge)
        if cluster is not None:
            nodes.append(DiagramNode(end, "END", "end", cluster))

    graph("", None, 0)
    nodes.append(DiagramNode(END, "END", "end"))
    return Diagram(
        "nested", tuple(nodes), tuple(edges), tuple(clusters), cluster_parents=tuple(parents)
    )


@settings(max_examples=60, deadline=None)
@given(subgraph_diagrams())
def test_any_subgraph_layout_keeps_clusters_apart(diagram: Diagram) -> None:
    layout = layout_diagram(diagram)
    assert_no_overlaps(layout)
    boxes = {c.id: c.rect for c in layout.clusters}
    for box in layout.nodes:
        home = box.node.cluster or ""
        for name, rect in boxes.items():
            if home == name or home.startswith(name + ":"):
                assert inside(box.rect, rect), (box.node.id, name)
            else:
                assert not box.rect.overlaps(rect), (box.node.id, name)
    paths = {c: c.split(":") for c in boxes}
    for a, b in itertools.combinations(boxes, 2):
        if paths[a] == paths[b][: len(paths[a])]:
            assert inside(boxes[b], boxes[a]), (b, a)
        elif paths[b] != paths[a][: len(paths[b])]:
            assert not boxes[a].overlaps(boxes[b]), (a, b)
