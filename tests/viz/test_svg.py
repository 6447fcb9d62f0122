"""Our own SVG: well-formed, every name readable as text, no box drawn over another, same bytes."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

from flowgraph import CompiledGraph
from flowgraph.viz import Diagram, DiagramEdge, DiagramNode, build_diagram, to_svg
from flowgraph.viz._layout import TIMES, Rect
from flowgraph.viz._render import to_svg as diagram_to_svg
from flowgraph.viz._svg import KIND_STYLE, escape

from .conftest import HARD_NAMES, build_persona_app, build_react_app, run_react_thread

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode("utf-8"))


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{NS}g") if cls in (g.get("class") or "").split()]


def texts(element: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in element.iter(f"{NS}text")]


def node_rects(root: ET.Element) -> dict[str, Rect]:
    """Each node's box as drawn (rect or polygon), read back from the SVG itself."""
    (graph,) = groups(root, "fg-graph")
    match = re.fullmatch(r"translate\(([-\d.]+),([-\d.]+)\)", graph.get("transform", ""))
    assert match
    dx, dy = float(match[1]), float(match[2])
    boxes: dict[str, Rect] = {}
    for group in groups(root, "fg-node"):
        shape = next(e for e in group if e.tag in (f"{NS}rect", f"{NS}polygon"))
        if shape.tag == f"{NS}rect":
            x, y = float(shape.get("x", "0")), float(shape.get("y", "0"))
            w, h = float(shape.get("width", "0")), float(shape.get("height", "0"))
        else:
            points = [tuple(map(float, p.split(","))) for p in shape.get("points", "").split()]
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            x, y, w, h = min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)
        boxes[group.get("data-node", "")] = Rect(x + dx, y + dy, w, h)
    return boxes


def test_every_sample_is_well_formed_with_every_name_and_no_overlap(
    sample_app: CompiledGraph,
) -> None:
    diagram = build_diagram(sample_app)
    root = parse(to_svg(sample_app))
    assert root.tag == f"{NS}svg"
    boxes = node_rects(root)
    assert set(boxes) == {n.id for n in diagram.nodes}
    for a, b in itertools.combinations(boxes.values(), 2):
        assert not a.overlaps(b)
    width, height = float(root.get("width", "0")), float(root.get("height", "0"))
    for box in boxes.values():
        assert 0 <= box.x and box.x + box.width <= width
        assert 0 <= box.y and box.y + box.height <= height
    for group, node in zip(groups(root, "fg-node"), diagram.nodes, strict=True):
        assert node.label in texts(group)


def test_hard_names_stay_text(hard_names_app: CompiledGraph) -> None:
    svg = to_svg(hard_names_app)
    root = parse(svg)
    drawn = {t for g in groups(root, "fg-node") for t in texts(g)}
    assert set(HARD_NAMES) <= drawn
    assert "<b>" not in svg  # escaped, never markup
    assert "&lt;b&gt;&amp;amp;&lt;/b&gt;" in svg
    labels = {t for g in groups(root, "fg-edge-label") for t in texts(g)}
    assert {'go "back"', "stop | done", "[中文]"} <= labels
    assert root.find(f"{NS}title") is not None
    assert "".join(root.find(f"{NS}title").itertext()) == 'hard "names"'  # type: ignore[union-attr]


def test_unprintable_characters_are_replaced_not_emitted() -> None:
    node = DiagramNode("bad\x01id", "bell\x07 ]]> <!-- end", "function")
    diagram = Diagram(
        "t\x00itle",
        (DiagramNode("__start__", "START", "start"), node, DiagramNode("__end__", "END", "end")),
        (
            DiagramEdge("__start__", "bad\x01id", "direct"),
            DiagramEdge("bad\x01id", "__end__", "direct"),
        ),
    )
    root = parse(diagram_to_svg(diagram))  # parses: no control characters, no stray markup
    assert "bell\ufffd ]]> <!-- end" in {t for g in groups(root, "fg-node") for t in texts(g)}
    assert escape('a"<&>') == "a&quot;&lt;&amp;&gt;"


def test_edge_styles(persona_app: CompiledGraph) -> None:
    root = parse(to_svg(persona_app))
    paths = {
        (g.get("data-source"), g.get("data-target")): g.find(f"{NS}path")
        for g in groups(root, "fg-edge")
    }
    solid = paths[("triage", "persona")]
    dashed = paths[("agent", "__end__")]
    command = paths[("audit", "triage")]
    assert solid is not None and dashed is not None and command is not None
    assert solid.get("stroke-dasharray") is None
    assert dashed.get("stroke-dasharray") == "6 4"
    assert command.get("stroke-dasharray") == "2 4"
    for path in (solid, dashed, command):
        assert path.get("marker-end", "").startswith("url(#fg-arrow-")
        assert path.get("d", "").startswith("M")
    # curves for forward edges, a lane with rounded corners for the Command back to triage
    assert " C" in dashed.get("d", "")
    assert " Q" in command.get("d", "")
    (back,) = [g for g in groups(root, "fg-edge") if "fg-back" in (g.get("class") or "")]
    assert back.get("data-source") == "audit"
    labels = {t for g in groups(root, "fg-edge-label") for t in texts(g)}
    assert {"audit", "finish"} <= labels


def test_kinds_are_told_apart(persona_app: CompiledGraph) -> None:
    root = parse(to_svg(persona_app))
    shapes = {}
    for group in groups(root, "fg-node"):
        shape = next(e for e in group if e.tag in (f"{NS}rect", f"{NS}polygon"))
        kind = group.get("class", "").split("fg-kind-")[1]
        shapes[kind] = (shape.tag.removeprefix(NS), shape.get("fill"), shape.get("rx"))
    assert shapes["router"][0] == "polygon"
    assert shapes["persona"][0] == "polygon"
    assert shapes["model"][:2] == ("rect", KIND_STYLE["model"][0])
    # START and END are rounded terminals: corner radius half the height
    start = next(g for g in groups(root, "fg-node") if g.get("data-node") == "__start__")
    rect = start.find(f"{NS}rect")
    assert rect is not None
    assert float(rect.get("rx", "0")) * 2 == float(rect.get("height", "0"))
    fills = {fill for _, fill, _ in shapes.values()}
    assert len(fills) == len({k for k in shapes if k not in ("start", "end")}) + 1
    legend = texts(groups(root, "fg-legend")[0])
    assert {"model", "router", "persona switch", "function", "conditional"} <= set(legend)


def test_subgraph_cluster_is_a_labelled_box(subgraph_app: CompiledGraph) -> None:
    root = parse(to_svg(subgraph_app))
    (cluster,) = groups(root, "fg-cluster")
    assert cluster.get("data-cluster") == "research"
    assert texts(cluster) == ["research"]
    box = cluster.find(f"{NS}rect")
    assert box is not None
    rects = node_rects(root)
    (graph,) = groups(root, "fg-graph")
    dx, dy = map(float, re.findall(r"[-\d.]+", graph.get("transform", "")))
    outer = Rect(
        float(box.get("x", "0")) + dx,
        float(box.get("y", "0")) + dy,
        float(box.get("width", "0")),
        float(box.get("height", "0")),
    )
    for name in ("research:search", "research:summarize", "research:__end__"):
        assert outer.overlaps(rects[name])
    for name in ("plan", "write", "__start__", "__end__"):
        assert not outer.overlaps(rects[name])


def test_thread_path_overlay() -> None:
    app = build_react_app()
    run_react_thread(app, "t1", turns=2)
    root = parse(to_svg(app, thread_id="t1"))
    nodes = {g.get("data-node"): g for g in groups(root, "fg-node")}
    agent = nodes["agent"]
    assert f"4{TIMES} · steps 1, 3, 5, 7" in texts(agent)
    shape = agent.find(f"{NS}rect")
    assert shape is not None and shape.get("stroke") == "#e11d48"
    edges = {(g.get("data-source"), g.get("data-target")): g for g in groups(root, "fg-edge")}
    taken = edges[("tools", "agent")].find(f"{NS}path")
    assert taken is not None and taken.get("marker-end") == "url(#fg-arrow-taken)"
    labels = {t for g in groups(root, "fg-edge-label") for t in texts(g)}
    assert {f"tools 2{TIMES}", f"END 2{TIMES}", f"2{TIMES}"} <= labels
    assert "path of thread t1" in texts(root)


def test_same_graph_same_bytes() -> None:
    assert to_svg(build_persona_app()) == to_svg(build_persona_app())
    app = build_react_app()
    run_react_thread(app)
    assert to_svg(app, thread_id="t1") == to_svg(app, thread_id="t1")
