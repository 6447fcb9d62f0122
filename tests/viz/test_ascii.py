"""ASCII diagrams: every node boxed, every edge shown, nothing wider than 80 columns."""

from __future__ import annotations

import re

from flowgraph import END, START, MessagesState, StateGraph
from flowgraph.viz import build_diagram, to_ascii
from flowgraph.viz._ascii import WIDTH, display_width

from .conftest import HARD_NAMES


def boxes(text: str) -> list[str]:
    """The labels of every box, top to bottom."""
    return [m.group(1) for m in re.finditer(r"^(?:\|   )*\| (\S.*?) \|(?:  .*)?$", text, re.M)]


def test_react_agent_drawing(react_app):
    text = to_ascii(react_app)
    assert text == react_app.to_ascii()
    assert text == (
        "react_agent\n"
        "===========\n"
        "\n"
        "+-------+\n"
        "| START |\n"
        "+-------+\n"
        "    |\n"
        "    v\n"
        "+-------+\n"
        "| agent |  model\n"
        "+-------+  -.-> END\n"
        "    :  tools\n"
        "    v\n"
        "+-------+\n"
        "| tools |  tool\n"
        "+-------+  --> agent\n"
        "\n"
        "+-----+\n"
        "| END |\n"
        "+-----+\n"
        "\n"
        "--> edge   -.-> conditional, Command or Send   ==> join (waits for all)\n"
    )


def test_every_node_is_a_box_and_every_edge_is_drawn(sample_app):
    diagram = build_diagram(sample_app)
    text = to_ascii(sample_app)
    assert boxes(text) == [n.label for n in diagram.nodes]
    labels = {n.id: n.label for n in diagram.nodes}
    lines = text.splitlines()
    order = [n.id for n in diagram.nodes]
    for edge in diagram.edges:
        follows = order.index(edge.target) == order.index(edge.source) + 1
        if follows:
            continue  # drawn as the arrow down to the next box
        arrow = {"direct": "-->", "join": "==>"}.get(edge.kind, "-.->")
        assert any(f"{arrow} {labels[edge.target]}" in line for line in lines), edge


def test_lines_fit_80_columns(sample_app):
    for line in to_ascii(sample_app).splitlines():
        assert display_width(line) <= WIDTH, line


def test_long_and_wide_names_are_cut_to_fit():
    long = "a_really_long_node_name_" * 8
    wide = "非常长的中文节点名称" * 6

    def noop(state: MessagesState) -> dict[str, str]:
        return {}

    graph = StateGraph(MessagesState)
    graph.add_node(long, noop).add_node(wide, noop)
    graph.add_edge(START, long).add_edge(long, wide).add_edge(wide, END)
    graph.add_conditional_edges(wide, lambda s: END, {"x" * 120: END, long: long})
    text = to_ascii(graph.compile(name="n" * 200))
    for line in text.splitlines():
        assert display_width(line) <= WIDTH, line
    assert "..." in text
    assert any(label.startswith("a_really_long_node_name_") for label in boxes(text))
    assert any(label.startswith("非常长的中文") for label in boxes(text))


def test_hard_names_and_branch_labels(hard_names_app):
    text = to_ascii(hard_names_app)
    assert boxes(text) == ["START", *HARD_NAMES, "END"]
    assert '-.-> my node  [go "back"]' in text
    assert "-.-> end  [[中文]]" in text
    assert "    :  stop | done\n    v\n+-----+\n| END |" in text


def test_clusters_commands_sends_and_joins(subgraph_app, persona_app, send_app):
    text = to_ascii(subgraph_app)
    assert ".--- subgraph research\n|   +----------+\n|   | research |  subgraph" in text
    assert "|   | summarize |  function\n|   +-----------+  -.-> search" in text
    assert "'---\n+-------+\n| write |" in text
    persona = to_ascii(persona_app)
    assert "+-------+  -.-> triage  [Command]" in persona
    assert "    :  Command\n    v\n+-----+\n| END |" in persona
    assert "    :  Send\n    v\n+------------+\n| write_joke |" in to_ascii(send_app)

    def noop(state: MessagesState) -> dict[str, str]:
        return {}

    graph = StateGraph(MessagesState)
    for name in ("a", "b", "c"):
        graph.add_node(name, noop)
    graph.add_edge(START, "a").add_edge(START, "b").add_edge(["a", "b"], "c").add_edge("c", END)
    joined = to_ascii(graph.compile())
    assert "+---+  ==> c  [join]" in joined  # a waits with b for c
    assert "    #  join\n    v\n+---+\n| c |" in joined


def test_same_graph_same_text(sample_app):
    assert to_ascii(sample_app) == to_ascii(sample_app)
    assert all(line.isprintable() for line in to_ascii(sample_app).splitlines())
