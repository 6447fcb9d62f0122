"""The neutral diagram model: what build_diagram reads from the compiled graph."""

from __future__ import annotations

from typing import Literal

import pytest

from flowgraph import END, START, MessagesState, RetryPolicy, StateGraph
from flowgraph.errors import DiagramError
from flowgraph.graph._diagrams import _registered, diagram_functions
from flowgraph.viz import Diagram, DiagramEdge, build_diagram

from .conftest import HARD_LABELS, HARD_NAMES, build_react_app


def edge_map(diagram: Diagram) -> dict[tuple[str, str], DiagramEdge]:
    edges = {(e.source, e.target): e for e in diagram.edges}
    assert len(edges) == len(diagram.edges), "one edge per (source, target) after merging"
    return edges


def noop(state: MessagesState) -> dict[str, list[str]]:
    return {}


def test_react_agent_nodes_and_edges(react_app):
    diagram = build_diagram(react_app)
    assert diagram.title == "react_agent"
    assert [(n.id, n.label, n.kind) for n in diagram.nodes] == [
        ("__start__", "START", "start"),
        ("agent", "agent", "model"),
        ("tools", "tools", "tool"),
        ("__end__", "END", "end"),
    ]
    assert [(e.source, e.target, e.kind, e.label) for e in diagram.edges] == [
        ("__start__", "agent", "direct", None),
        ("agent", "tools", "conditional", "tools"),
        ("agent", "__end__", "conditional", "END"),
        ("tools", "agent", "direct", None),
    ]
    assert diagram.thread_id is None and diagram.clusters == ()
    assert all(n.visits == 0 and n.steps == () for n in diagram.nodes)


def test_persona_graph_kinds_labels_and_command_destinations(persona_app):
    diagram = build_diagram(persona_app)
    kinds = {n.id: n.kind for n in diagram.nodes}
    assert kinds == {
        START: "start",
        "triage": "router",
        "persona": "persona",
        "agent": "model",
        "audit": "function",
        END: "end",
    }
    edges = edge_map(diagram)
    # path_map keys are the labels, even where they differ from the target
    assert (edges["agent", "audit"].kind, edges["agent", "audit"].label) == ("conditional", "audit")
    assert (edges["agent", END].kind, edges["agent", END].label) == ("conditional", "finish")
    # Command destinations declared with add_node(..., destinations=...)
    assert edges["audit", "triage"].kind == "command"
    assert edges["audit", END].kind == "command"
    assert dict(diagram.node("audit").details)["destinations"] == "triage, END"
    assert dict(diagram.node("audit").details)["function"].endswith("_audit")


def test_hard_names_are_kept_verbatim(hard_names_app):
    diagram = build_diagram(hard_names_app)
    assert [n.id for n in diagram.nodes] == [START, *HARD_NAMES, END]
    assert [n.label for n in diagram.nodes][1:-1] == list(HARD_NAMES)
    edges = edge_map(diagram)
    for label, target in HARD_LABELS.items():
        edge = edges[HARD_NAMES[-1], target]
        assert (edge.kind, edge.label) == ("conditional", label)


def test_send_branch_points_at_the_nodes_only_it_reaches(send_app):
    edges = edge_map(build_diagram(send_app))
    send = edges["plan", "write_joke"]
    assert (send.kind, send.label) == ("send", "Send")
    assert send.is_dashed
    assert edges["write_joke", "best"].kind == "direct"
    assert not any(e.kind == "send" for k, e in edges.items() if k != ("plan", "write_joke"))


def test_open_branch_without_unreached_nodes_may_lead_anywhere():
    def anywhere(state: MessagesState) -> str:
        return "b"

    graph = StateGraph(MessagesState)
    graph.add_node("a", noop).add_node("b", noop)
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("b", END)
    graph.add_conditional_edges("b", anywhere)
    diagram = build_diagram(graph.compile())
    dynamic = [(e.source, e.target) for e in diagram.edges if e.kind == "conditional"]
    assert dynamic == [("b", "a"), ("b", "b"), ("b", END)]
    assert all(e.label is None for e in diagram.edges if e.kind == "conditional")


def test_labels_leading_to_one_node_share_an_edge_and_joins_are_marked():
    def pick(state: MessagesState) -> str:
        return "yes"

    graph = StateGraph(MessagesState)
    for name in ("a", "b", "c", "d"):
        graph.add_node(name, noop, retry=RetryPolicy(max_attempts=3) if name == "d" else None)
    graph.add_edge(START, "a").add_edge(START, "b")
    graph.add_edge(["a", "b"], "c")
    graph.add_conditional_edges("c", pick, {"yes": "d", "ok": "d", "no": END})
    graph.add_edge("d", END)
    diagram = build_diagram(graph.compile())
    edges = edge_map(diagram)
    assert edges["a", "c"].kind == edges["b", "c"].kind == "join"
    assert edges["c", "d"].label == "yes, ok"
    assert edges["c", END].label == "no"
    assert dict(diagram.node("d").details)["retry"] == "3 attempts"


def test_literal_hint_labels():
    def route(state: MessagesState) -> Literal["a", "__end__"]:
        return END

    graph = StateGraph(MessagesState)
    graph.add_node("a", noop).add_edge(START, "a").add_conditional_edges("a", route)
    edges = edge_map(build_diagram(graph.compile()))
    assert (edges["a", "a"].label, edges["a", END].label) == ("a", "END")


def test_subgraph_is_a_cluster_with_entry_and_exit(subgraph_app):
    diagram = build_diagram(subgraph_app)
    assert diagram.clusters == (("research", "research"),)
    clustered = [(n.id, n.kind) for n in diagram.nodes if n.cluster == "research"]
    assert clustered == [
        ("research", "subgraph"),
        ("research:search", "function"),
        ("research:summarize", "function"),
        ("research:__end__", "end"),
    ]
    assert diagram.nodes[-1].id == END and diagram.nodes[0].id == START
    edges = edge_map(diagram)
    assert ("plan", "research") in edges  # into the cluster: its entry
    assert ("research:__end__", "write") in edges  # out of it: from its exit
    assert ("research", "write") not in edges
    assert edges["research", "research:search"].kind == "direct"
    assert edges["research:summarize", "research:__end__"].kind == "conditional"
    ids = {n.id for n in diagram.nodes}
    assert all(e.source in ids and e.target in ids for e in diagram.edges)


def test_nested_subgraphs_record_their_parent(nested_app):
    diagram = build_diagram(nested_app)
    assert diagram.clusters == (("team", "team"), ("team:research", "research"))
    assert diagram.cluster_parent("team:research") == "team"
    assert diagram.cluster_parent("team") is None
    assert diagram.node("team:research:search").cluster == "team:research"
    assert ("team:research:__end__", "team:__end__") in edge_map(diagram)


def test_same_graph_same_diagram(sample_app):
    assert build_diagram(sample_app) == build_diagram(sample_app)


def test_rebuilt_graph_gives_an_equal_diagram():
    assert build_diagram(build_react_app()) == build_diagram(build_react_app())


def test_every_edge_joins_known_nodes(sample_app):
    diagram = build_diagram(sample_app)
    ids = [n.id for n in diagram.nodes]
    assert len(ids) == len(set(ids))
    assert all(e.source in ids and e.target in ids for e in diagram.edges)
    assert {n.kind for n in diagram.nodes} <= {
        "start",
        "end",
        "model",
        "tool",
        "router",
        "persona",
        "function",
        "subgraph",
    }


def test_unknown_node_lookup_names_it(react_app):
    with pytest.raises(KeyError, match="nope"):
        build_diagram(react_app).node("nope")


def test_graph_methods_without_viz_hook_say_what_to_import(monkeypatch, react_app):
    monkeypatch.setattr("flowgraph.graph._diagrams._registered", [])
    with pytest.raises(DiagramError, match="import flowgraph"):
        react_app.to_mermaid()
    monkeypatch.undo()
    assert diagram_functions() is _registered[0]
    assert react_app.to_mermaid().startswith("---")
