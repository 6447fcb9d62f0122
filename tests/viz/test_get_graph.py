"""`app.get_graph()`: LangGraph's drawable graph -- nodes, edges, Mermaid, JSON, xray, PNG."""

from __future__ import annotations

import asyncio
import struct
import zlib
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import pytest
from typing_extensions import TypedDict

from flowgraph import END, START, Command, CompiledGraph, StateGraph, ToolNode, entrypoint, tool
from flowgraph.errors import DiagramError
from flowgraph.viz import CurveStyle, DrawableGraph, NodeStyles
from flowgraph.viz._drawable import Edge, Node
from flowgraph.viz._mermaid import safe_id, yaml_block


class State(TypedDict):
    n: int


def _noop(state: State) -> dict[str, Any]:
    return {}


def _graph(*names: str) -> StateGraph:
    builder = StateGraph(State)
    for name in names:
        builder.add_node(name, _noop)
    return builder


def _pairs(drawing: DrawableGraph) -> list[tuple[str, str, str | None, bool]]:
    return [(e.source, e.target, e.data, e.conditional) for e in drawing.edges]


def _chain() -> CompiledGraph:
    builder = _graph("one", "two")
    builder.add_edge(START, "one")
    builder.add_edge("one", "two")
    builder.add_edge("two", END)
    return builder.compile()


def _labelled() -> CompiledGraph:
    builder = _graph("ask", "yes", "no")
    builder.add_edge(START, "ask")
    builder.add_conditional_edges("ask", lambda s: "y", {"y": "yes", "n": "no", "stop": END})
    builder.add_edge("yes", END)
    return builder.compile(interrupt_before=["yes"], interrupt_after=["yes", "no"])


def test_nodes_and_edges_of_a_chain() -> None:
    drawing = _chain().get_graph()
    assert list(drawing.nodes) == ["__start__", "one", "two", "__end__"]
    one = drawing.nodes["one"]
    assert (one.id, one.name, one.data, one.metadata) == ("one", "one", _noop, None)
    assert drawing.nodes["__end__"] == Node("__end__", "__end__", None, None)
    assert drawing.edges == [
        Edge("__start__", "one"),
        Edge("one", "two"),
        Edge("two", "__end__"),
    ]
    first, last = drawing.first_node(), drawing.last_node()
    assert (first and first.id, last and last.id) == ("__start__", "__end__")


def test_mermaid_text_of_a_chain_line_for_line() -> None:
    assert _chain().get_graph().draw_mermaid().splitlines() == [
        "---",
        "config:",
        "  flowchart:",
        "    curve: linear",
        "---",
        "graph TD;",
        "\t__start__([<p>__start__</p>]):::first",
        "\tone(one)",
        "\ttwo(two)",
        "\t__end__([<p>__end__</p>]):::last",
        "\t__start__ --> one;",
        "\tone --> two;",
        "\ttwo --> __end__;",
        "\tclassDef default fill:#f2f0ff,line-height:1.2",
        "\tclassDef first fill-opacity:0",
        "\tclassDef last fill:#bfb6fc",
    ]


def test_path_map_keys_label_the_edges_in_sorted_order() -> None:
    drawing = _labelled().get_graph()
    assert _pairs(drawing) == [
        ("__start__", "ask", None, False),
        ("ask", "__end__", "stop", True),
        ("ask", "no", "n", True),
        ("ask", "yes", "y", True),
        ("no", "__end__", None, False),
        ("yes", "__end__", None, False),
    ]
    text = drawing.draw_mermaid()
    assert "\task -. &nbsp;stop&nbsp; .-> __end__;\n" in text
    assert "\tyes(yes<hr/><small><em>__interrupt = before,after</em></small>)\n" in text
    assert "\tno(no<hr/><small><em>__interrupt = after</em></small>)\n" in text


def test_literal_hints_and_command_destinations_are_unlabelled_dashed_edges() -> None:
    def route(state: State) -> Literal["b", "__end__"]:
        return "b"

    def jump(state: State) -> Command[Literal["a", "c"]]:
        return Command(goto="c")

    builder = StateGraph(State)
    builder.add_node("a", _noop)
    builder.add_node("b", jump)
    builder.add_node("c", _noop)
    builder.add_edge(START, "a")
    builder.add_conditional_edges("a", route)
    drawing = builder.compile().get_graph()
    assert _pairs(drawing) == [
        ("__start__", "a", None, False),
        ("a", "__end__", None, True),
        ("a", "b", None, True),
        ("b", "a", None, True),
        ("b", "c", None, True),
        ("c", "__end__", None, False),
    ]


def test_an_open_branch_draws_no_edges_to_the_nodes_it_may_reach() -> None:
    builder = _graph("a", "b", "c")
    builder.add_edge(START, "a")
    builder.add_conditional_edges("a", lambda s: "b")  # no path_map, no hint
    builder.add_edge("b", "c")
    drawing = builder.compile().get_graph()
    # the dry run never reaches b, so neither b -> c is drawn; a ends the run
    assert _pairs(drawing) == [("__start__", "a", None, False), ("a", "__end__", None, False)]
    assert drawing.first_node() is None and drawing.last_node() is None
    text = drawing.draw_mermaid()
    assert "\t__start__(<p>__start__</p>)\n" in text and "\tb(b)\n" in text


@pytest.mark.parametrize(("ring", "last"), [("ab", "b"), ("abc", "a"), ("abcd", "b")])
def test_a_cycle_without_end_ends_at_the_dry_runs_last_step(ring: str, last: str) -> None:
    builder = _graph(*ring)
    builder.add_edge(START, ring[0])
    for source, target in zip(ring, ring[1:] + ring[0], strict=True):
        builder.add_edge(source, target)
    drawing = builder.compile().get_graph()
    # the dry run stops after step 249 (START is step -1): the node it is at gets a dashed
    # edge to END, as in LangGraph (step 249 of a ring of n runs ring[249 % n])
    assert drawing.edges[-1] == Edge(last, "__end__", None, True)
    assert [e for e in drawing.edges if e.target == "__end__"] == [drawing.edges[-1]]


def test_joins_defer_metadata_and_tools() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    builder = _graph("left", "right")
    builder.add_node("merge", _noop, defer=True, metadata={"owner": "me", "tags": ["x", "y"]})
    builder.add_node("tools", ToolNode([add]))
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    builder.add_edge(["left", "right"], "merge")
    builder.add_edge("merge", "tools")
    drawing = builder.compile().get_graph()
    assert drawing.nodes["merge"].metadata == {"owner": "me", "tags": ["x", "y"], "defer": True}
    assert drawing.nodes["tools"].metadata == {"__tools": ["add"]}
    assert ("left", "merge", None, False) in _pairs(drawing)
    assert ("right", "merge", None, False) in _pairs(drawing)
    text = drawing.draw_mermaid()
    assert "merge(merge<hr/><small><em>owner = me\ntags = x, y\ndefer = True</em></small>)" in text
    assert "\ttools(tools<hr/><small><em>__tools = add</em></small>)\n" in text


def _nested() -> CompiledGraph:
    inner = _graph("i1", "i2")
    inner.add_edge(START, "i1")
    inner.add_edge("i1", "i2")
    middle = _graph("m1")
    middle.add_node("deep", inner.compile())
    middle.add_edge(START, "m1")
    middle.add_edge("m1", "deep")
    outer = _graph("a", "z")
    outer.add_node("child", middle.compile())
    outer.add_edge(START, "a")
    outer.add_edge("a", "child")
    outer.add_edge("child", "z")
    return outer.compile()


def test_xray_expands_subgraphs_as_deep_as_asked() -> None:
    app = _nested()
    plain = app.get_graph()
    assert list(plain.nodes) == ["__start__", "a", "z", "child", "__end__"]  # as added
    assert isinstance(plain.nodes["child"].data, CompiledGraph)
    one = app.get_graph(xray=1)
    assert list(one.nodes) == ["__start__", "a", "z", "__end__", "child:m1", "child:deep"]
    assert ("a", "child:m1") in [(e.source, e.target) for e in one.edges]
    full = app.get_graph(xray=True)
    assert list(full.nodes)[4:] == ["child:m1", "child:deep:i1", "child:deep:i2"]
    assert [full.nodes[k].name for k in list(full.nodes)[4:]] == ["m1", "i1", "i2"]
    assert [(e.source, e.target) for e in full.edges] == [
        ("__start__", "a"),
        ("a", "child:m1"),
        ("child:deep:i2", "z"),
        ("z", "__end__"),
        ("child:m1", "child:deep:i1"),
        ("child:deep:i1", "child:deep:i2"),
    ]
    assert app.get_graph(xray=2).edges == full.edges
    text = full.draw_mermaid(with_styles=False)
    assert text.splitlines()[5:] == [
        "\tsubgraph child",
        "\tchild\\3am1 --> child\\3adeep\\3ai1;",
        "\tsubgraph deep",
        "\tchild\\3adeep\\3ai1 --> child\\3adeep\\3ai2;",
        "\tend",
        "\tend",
    ]


def test_a_subgraph_whose_start_branches_keeps_its_start() -> None:
    def pick(state: State) -> Literal["i1", "i2"]:
        return "i1"

    inner = _graph("i1", "i2")
    inner.add_conditional_edges(START, pick)
    outer = StateGraph(State)
    outer.add_node("sub", inner.compile())
    outer.add_edge(START, "sub")
    drawing = outer.compile().get_graph(xray=True)
    # START leads to two nodes, so trimming it would leave no first node: both ends stay
    assert list(drawing.nodes) == [
        "__start__", "__end__", "sub:__start__", "sub:i1", "sub:i2", "sub:__end__"
    ]  # fmt: skip
    assert _pairs(drawing)[:3] == [
        ("__start__", "sub:__start__", None, False),
        ("sub:__end__", "__end__", None, False),
        ("sub:__start__", "sub:i1", None, True),
    ]


def test_two_subgraph_nodes_of_one_name_cannot_be_drawn() -> None:
    def side() -> CompiledGraph:
        inner = _graph("x", "y")
        inner.add_edge(START, "x")
        inner.add_edge("x", "y")
        middle = _graph("m")
        middle.add_node("deep", inner.compile())
        middle.add_edge(START, "m")
        middle.add_edge("m", "deep")
        return middle.compile()

    outer = StateGraph(State)
    outer.add_node("left", side())
    outer.add_node("right", side())
    outer.add_edge(START, "left")
    outer.add_edge("left", "right")
    drawing = outer.compile().get_graph(xray=True)
    assert "left:deep:x" in drawing.nodes and "right:deep:x" in drawing.nodes
    with pytest.raises(DiagramError, match="both named 'deep'"):
        drawing.draw_mermaid()  # LangGraph raises a ValueError too (DiagramError is one)
    assert outer.compile().get_graph(xray=1).draw_mermaid().count("\tsubgraph ") == 2


def test_to_json_matches_langgraphs_shape() -> None:
    data = _labelled().get_graph().to_json()
    assert data["edges"][:2] == [
        {"source": "__start__", "target": "ask"},
        {"source": "ask", "target": "__end__", "data": "stop", "conditional": True},
    ]
    nodes = {node["id"]: node for node in data["nodes"]}
    assert nodes["__end__"] == {"id": "__end__"}
    assert nodes["ask"]["type"] == "runnable"
    assert nodes["ask"]["data"] == {"id": [*__name__.split("."), "_noop"], "name": "ask"}
    assert nodes["yes"]["metadata"] == {"__interrupt": "before,after"}


def test_draw_mermaid_options() -> None:
    builder = _graph("a", "b")
    builder.add_edge(START, "a")
    builder.add_conditional_edges("a", lambda s: 1, {"one two three four five": "b"})
    drawing = builder.compile().get_graph()
    bare = drawing.draw_mermaid(with_styles=False)
    assert bare.startswith("graph TD;\n\t__start__ --> a;\n")
    assert "classDef" not in bare and "(a)" not in bare
    wrapped = drawing.draw_mermaid(with_styles=False, wrap_label_n_words=2)
    assert "a -. &nbsp;one two&nbsp<br>&nbspthree four&nbsp<br>&nbspfive&nbsp; .-> b;" in wrapped
    styled = drawing.draw_mermaid(
        curve_style=CurveStyle.BASIS,
        node_colors=NodeStyles(first="fill:#000"),
        frontmatter_config={"title": "Mine: v2", "config": {"theme": "neutral"}},
    )
    assert styled.startswith(
        "---\nconfig:\n  flowchart:\n    curve: basis\n  theme: neutral\ntitle: 'Mine: v2'\n---\n"
    )
    assert "\tclassDef first fill:#000\n" in styled
    assert drawing.draw_mermaid(curve_style="step").startswith(
        "---\nconfig:\n  flowchart:\n    curve: step\n"
    )


def test_frontmatter_is_quoted_as_pyyaml_quotes_it() -> None:
    yaml = pytest.importorskip("yaml")
    values = "red,#e2e2e2,fill:#000,a b,yes,Off,y,12,1.5,0x1f,.inf,-,-a,a: b,a #b,x:,, a,it's,~"
    values += ",NULL,Trebuchet MS,16px,handDrawn,é"
    config = {
        "theme": {f"k{i}": v for i, v in enumerate(values.split(","))},
        "n": 3,
        "on": True,
        "l": [1],
    }
    assert yaml_block(config) == yaml.dump(config, default_flow_style=False)


def test_safe_ids_keep_only_letters_digits_dash_and_underscore() -> None:
    assert safe_id("my node") == "my\\20node"
    assert safe_id("问候-x_1") == "\\95ee\\5019-x_1"
    assert safe_id("a:b") == "a\\3ab"


def test_entrypoint_is_drawn_as_langgraph_draws_it() -> None:
    @entrypoint()
    def workflow(x: int) -> int:
        return x

    drawing = workflow.get_graph()
    assert list(drawing.nodes) == ["workflow", "__start__", "__end__"]
    assert _pairs(drawing) == [
        ("__start__", "workflow", None, False),
        ("workflow", "__end__", None, True),
    ]


def test_aget_graph_is_get_graph() -> None:
    app = _labelled()
    drawing = asyncio.run(app.aget_graph(xray=True))
    assert drawing == app.get_graph()


def test_draw_ascii_names_every_node_and_edge() -> None:
    text = _nested().get_graph(xray=True).draw_ascii()
    assert ".--- subgraph child" in text and "|   .--- subgraph deep" in text
    assert "+---+  --> m1" in text  # a -> child:m1, drawn beside a
    assert "--> z" in text
    for name in ("__start__", "| a |", "| m1 |", "| i1 |", "| i2 |", "| z |", "__end__"):
        assert name in text


def _decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB rows of a PNG whose rows are unfiltered (as ours are)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, {}
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert zlib.crc32(kind + body) == crc
        chunks[kind] = chunks.get(kind, b"") + body
        at += 12 + length
    width, height, depth, colour, _, _, _ = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert (depth, colour) == (8, 2)  # 8-bit RGB
    raw = zlib.decompress(chunks[b"IDAT"])
    stride = 1 + 3 * width
    rows = [raw[y * stride : (y + 1) * stride] for y in range(height)]
    assert all(row[0] == 0 for row in rows)
    return width, height, [row[1:] for row in rows]


def _colours(rows: list[bytes]) -> Counter[tuple[int, int, int]]:
    return Counter(tuple(row[i : i + 3]) for row in rows for i in range(0, len(row), 3))


def test_png_is_drawn_here_with_no_dependency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "")  # no Graphviz, no browser: nothing is run, nothing is sent
    out = tmp_path / "graph.png"
    drawing = _labelled().get_graph()
    data = drawing.draw_mermaid_png(output_file_path=str(out), draw_method="api")
    assert out.read_bytes() == data
    width, height, rows = _decode_png(data)
    assert 200 < width < 2000 and 200 < height < 2000
    colours = _colours(rows)
    assert colours[(255, 255, 255)] > width * height / 3  # the white background
    assert colours[(0x1F, 0x29, 0x37)] > 1000  # START and END's dark boxes
    assert colours[(0xF8, 0xFA, 0xFC)] > 1000  # three function boxes
    assert colours[(0x0F, 0x17, 0x2A)] > 100  # their names, in the pixel font
    assert drawing.draw_png() == data  # the same drawing, every time
    dark = drawing.draw_png(background_color="#000000")
    assert _colours(_decode_png(dark)[2])[(0, 0, 0)] > width * height / 3


def test_png_draws_more_when_the_graph_has_more() -> None:
    small = _decode_png(_chain().get_graph().draw_png())
    nested = _decode_png(_nested().get_graph(xray=True).draw_png())
    assert nested[1] > small[1]  # more ranks, a taller picture
    assert _colours(nested[2])[(0xF1, 0xF5, 0xF9)] > 1000  # a nested subgraph's shaded box


_CALLED = _chain()


def test_xray_finds_a_graph_a_node_calls() -> None:
    def by_global(state: State) -> dict[str, Any]:
        return {"n": _CALLED.invoke(state)["n"]}

    def by_closure(graph: CompiledGraph) -> Any:
        return lambda state: graph.invoke(state)

    class Caller:
        def __call__(self, state: State) -> dict[str, Any]:
            return dict(_CALLED.invoke(state))

    builder = StateGraph(State)
    builder.add_node("g", by_global)
    builder.add_node("c", by_closure(_CALLED))
    builder.add_node("o", Caller())  # an object: its code is not read
    builder.add_edge(START, "g")
    builder.add_edge("g", "c")
    builder.add_edge("c", "o")
    app = builder.compile()
    assert list(app.get_graph().nodes) == ["__start__", "g", "c", "o", "__end__"]
    assert list(app.get_graph(xray=True).nodes) == [
        "__start__", "o", "__end__", "g:one", "g:two", "c:one", "c:two"
    ]  # fmt: skip


def test_a_notebook_shows_the_graphs_picture() -> None:
    app = _labelled()
    bundle = app._repr_mimebundle_()
    assert bundle["text/plain"] == repr(app)
    assert bundle["image/png"] == app.get_graph().draw_mermaid_png()


def test_a_node_asking_for_its_config_is_drawn_as_the_function_written() -> None:
    def configured(state: State, config: Any) -> dict[str, Any]:
        return {}

    builder = StateGraph(State)
    builder.add_node("c", configured)
    builder.add_edge(START, "c")
    drawing = builder.compile().get_graph()
    assert drawing.nodes["c"].data is configured
    path = drawing.to_json()["nodes"][1]["data"]["id"]
    assert path == [*__name__.split("."), configured.__qualname__]  # not the injecting wrapper
