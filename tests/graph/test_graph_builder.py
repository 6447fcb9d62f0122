"""StateGraph building and compile()'s validation (DESIGN §3, issue 3 items 1, 2)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

import networkx as nx
import pytest
from pydantic import Field

from flowgraph import END, START, Command, MessagesState, StateGraph
from flowgraph.errors import GraphValidationError


class State(MessagesState):
    trail: Annotated[list[str], operator.add] = Field(default_factory=list)


def mark(name: str) -> Any:
    """A node that appends its name to `trail`."""

    def node(state: State) -> dict[str, Any]:
        return {"trail": [name]}

    node.__name__ = name
    return node


def edge_kinds(graph: nx.MultiDiGraph[str]) -> set[tuple[str, str, str]]:
    return {(a, b, d["kind"]) for a, b, d in graph.edges(data=True)}


# ------------------------------------------------------------------ builder


def test_add_node_named_and_by_function_name() -> None:
    def greet(state: State) -> dict[str, Any]:
        return {"trail": ["greet"]}

    g = StateGraph(State)
    g.add_node(greet)
    g.add_node("other", mark("other"))
    g.add_edge(START, "greet").add_edge("greet", "other").add_edge("other", END)
    assert set(g.nodes) == {"greet", "other"}
    assert g.nodes["greet"].fn is greet
    assert g.compile().invoke({}).trail == ["greet", "other"]


def test_add_node_without_function_needs_one() -> None:
    with pytest.raises(GraphValidationError) as info:
        StateGraph(State).add_node("lonely")
    assert info.value.node == "lonely"


def test_graph_is_a_multidigraph_with_nodes_and_edge_kinds() -> None:
    def route(state: State) -> Literal["b", "__end__"]:
        return "b"

    g = StateGraph(State)
    g.add_node("a", mark("a"))
    g.add_node("b", mark("b"))
    g.add_node("c", mark("c"))
    g.add_node("d", lambda s: Command(goto="c"), destinations=["c"])
    g.add_edge(START, "a")
    g.add_edge(START, "d")
    g.add_conditional_edges("a", route)
    g.add_edge(["b", "d"], "c")
    g.add_edge("c", END)
    app = g.compile()
    assert isinstance(g.graph, nx.MultiDiGraph)
    assert app.graph is g.graph
    assert set(g.graph.nodes) == {START, END, "a", "b", "c", "d"}
    assert g.graph.nodes[START]["kind"] == "start"
    assert g.graph.nodes[END]["kind"] == "end"
    assert g.graph.nodes["a"]["kind"] == "function"
    assert edge_kinds(g.graph) == {
        (START, "a", "direct"),
        (START, "d", "direct"),
        ("a", "b", "conditional"),
        ("a", END, "conditional"),
        ("b", "c", "join"),
        ("d", "c", "join"),
        ("d", "c", "command"),
        ("c", END, "direct"),
    }


def test_conditional_edge_with_path_map_dict_labels_edges_and_routes() -> None:
    g = StateGraph(State)
    g.add_node("a", mark("a"))
    g.add_node("yes", mark("yes"))
    g.add_node("no", mark("no"))
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: len(s.trail) == 1, {True: "yes", False: "no"})
    g.add_edge("yes", END)
    g.add_edge("no", END)
    labels = {
        (a, b): d.get("label") for a, b, d in g.graph.edges(data=True) if d["kind"] == "conditional"
    }
    assert labels == {("a", "yes"): "True", ("a", "no"): "False"}
    assert g.compile().invoke({}).trail == ["a", "yes"]


def test_conditional_edge_with_path_map_list() -> None:
    g = StateGraph(State)
    g.add_node("a", mark("a"))
    g.add_node("b", mark("b"))
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "b" if s.trail == ["a"] else END, ["b", END])
    g.add_edge("b", END)
    conditional = {(a, b) for a, b, k in edge_kinds(g.graph) if k == "conditional"}
    assert conditional == {("a", "b"), ("a", END)}
    assert g.compile().invoke({}).trail == ["a", "b"]


def test_conditional_edge_targets_from_literal_hint() -> None:
    def route(state: State) -> Literal["b", "c"]:
        return "c"

    g = StateGraph(State)
    g.add_node("a", mark("a"))
    g.add_node("b", mark("b"))
    g.add_node("c", mark("c"))
    g.add_edge(START, "a")
    g.add_conditional_edges("a", route)
    g.add_edge("b", END)
    g.add_edge("c", END)
    assert g.branches[0].targets == ("b", "c")
    conditional = {(a, b) for a, b, k in edge_kinds(g.graph) if k == "conditional"}
    assert conditional == {("a", "b"), ("a", "c")}
    assert g.compile().invoke({}).trail == ["a", "c"]


def test_literal_hint_naming_an_unknown_node_fails_compile() -> None:
    def route(state: State) -> Literal["b", "ghost"]:
        return "b"

    g = StateGraph(State)
    g.add_node("a", mark("a"))
    g.add_node("b", mark("b"))
    g.add_edge(START, "a")
    g.add_conditional_edges("a", route)
    g.add_edge("b", END)
    with pytest.raises(GraphValidationError, match="ghost") as info:
        g.compile()
    assert info.value.node == "ghost"


def test_add_sequence_chains_nodes_in_order() -> None:
    def first(state: State) -> dict[str, Any]:
        return {"trail": ["first"]}

    g = StateGraph(State)
    g.add_sequence([first, ("second", mark("second")), ("third", mark("third"))])
    g.add_edge(START, "first")
    g.add_edge("third", END)
    assert ("first", "second", "direct") in edge_kinds(g.graph)
    assert ("second", "third", "direct") in edge_kinds(g.graph)
    assert g.compile().invoke({}).trail == ["first", "second", "third"]


def test_builder_methods_chain() -> None:
    g = StateGraph(State)
    assert g.add_node("a", mark("a")) is g
    assert g.add_edge(START, "a") is g
    assert g.add_conditional_edges("a", lambda s: END, [END]) is g


def test_edges_may_be_added_before_their_nodes() -> None:
    g = StateGraph(State)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_conditional_edges("b", lambda s: "stop", {"stop": END, "again": "a"})
    g.add_node("a", mark("a"), destinations=["b"])
    g.add_node("b", mark("b"))
    assert g.compile().invoke({}).trail == ["a", "b"]


def test_destinations_may_name_nodes_added_later() -> None:
    g = StateGraph(State)
    g.add_node("router", lambda s: Command(goto="b"), destinations=["b"])
    g.add_node("b", mark("b"))
    g.add_edge(START, "router")
    g.add_edge("b", END)
    assert g.compile().invoke({}).trail == ["b"]


# ------------------------------------------------------------------ validation


def build(*nodes: str) -> StateGraph:
    g = StateGraph(State)
    for name in nodes:
        g.add_node(name, mark(name))
    return g


def test_unknown_node_in_edge_target() -> None:
    g = build("a")
    g.add_edge(START, "a").add_edge("a", "ghost")
    with pytest.raises(GraphValidationError, match="'ghost'") as info:
        g.compile()
    assert info.value.node == "ghost"
    assert "add_node" in str(info.value)


def test_unknown_node_in_edge_source() -> None:
    g = build("a")
    g.add_edge(START, "a").add_edge("a", END).add_edge("ghost", "a")
    with pytest.raises(GraphValidationError, match="'ghost'") as info:
        g.compile()
    assert info.value.node == "ghost"


def test_unknown_node_in_join_edge() -> None:
    g = build("a", "c")
    g.add_edge(START, "a").add_edge(["a", "ghost"], "c").add_edge("c", END)
    with pytest.raises(GraphValidationError, match="'ghost'") as info:
        g.compile()
    assert info.value.node == "ghost"


def test_unknown_conditional_source() -> None:
    g = build("a")
    g.add_edge(START, "a").add_edge("a", END)
    g.add_conditional_edges("ghost", lambda s: END, [END])
    with pytest.raises(GraphValidationError, match="'ghost'") as info:
        g.compile()
    assert info.value.node == "ghost"


def test_duplicate_node_name() -> None:
    g = build("a")
    with pytest.raises(GraphValidationError, match="'a'") as info:
        g.add_node("a", mark("a"))
    assert info.value.node == "a"


@pytest.mark.parametrize("name", [START, END])
def test_reserved_node_name(name: str) -> None:
    with pytest.raises(GraphValidationError, match="reserved") as info:
        StateGraph(State).add_node(name, mark("x"))
    assert info.value.node == name


def test_non_callable_node() -> None:
    with pytest.raises(GraphValidationError, match="callable") as info:
        StateGraph(State).add_node("a", "not a function")  # type: ignore[arg-type]
    assert info.value.node == "a"
    assert "'a'" in str(info.value)


def test_no_edge_from_start() -> None:
    g = build("a")
    g.add_edge("a", END)
    with pytest.raises(GraphValidationError, match="START") as info:
        g.compile()
    assert info.value.node == START


def test_node_unreachable_from_start() -> None:
    g = build("a", "island")
    g.add_edge(START, "a").add_edge("a", END).add_edge("island", END)
    with pytest.raises(GraphValidationError, match="'island' is unreachable") as info:
        g.compile()
    assert info.value.node == "island"


def test_node_reachable_only_through_a_cycle_island_is_unreachable() -> None:
    g = build("a", "x", "y")
    g.add_edge(START, "a").add_edge("a", END).add_edge("x", "y").add_edge("y", "x")
    with pytest.raises(GraphValidationError, match="unreachable") as info:
        g.compile()
    assert info.value.node in {"x", "y"}


def test_node_with_no_way_out_ends_the_run() -> None:
    # as in LangGraph (issue 18): no edge out of a node means END after it
    g = build("a", "last")
    g.add_edge(START, "a").add_edge("a", "last")
    app = g.compile()
    assert app.invoke({}).trail == ["a", "last"]


def test_path_map_target_that_does_not_exist() -> None:
    g = build("a")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "go", {"go": "ghost", "stop": END})
    with pytest.raises(GraphValidationError, match="path_map") as info:
        g.compile()
    assert info.value.node == "ghost"
    assert "'ghost'" in str(info.value)


def test_command_destination_naming_unknown_node() -> None:
    g = StateGraph(State)
    g.add_node("a", lambda s: Command(goto="ghost"), destinations=["ghost"])
    g.add_edge(START, "a")
    with pytest.raises(GraphValidationError, match="destinations") as info:
        g.compile()
    assert info.value.node == "ghost"


def test_destinations_count_as_a_way_out_and_make_targets_reachable() -> None:
    g = StateGraph(State)
    g.add_node("b", mark("b"))
    g.add_node("a", lambda s: Command(goto="b", update={"trail": ["a"]}), destinations=["b"])
    g.add_edge(START, "a")
    g.add_edge("b", END)
    assert g.compile().invoke({}).trail == ["a", "b"]


def test_branch_without_known_targets_may_lead_anywhere() -> None:
    g = build("a", "b")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "b")  # no path_map, no hint: open
    g.add_edge("b", END)
    assert g.compile().invoke({}).trail == ["a", "b"]


def test_interrupt_names_must_exist() -> None:
    g = build("a")
    g.add_edge(START, "a").add_edge("a", END)
    with pytest.raises(GraphValidationError) as info:
        g.compile(interrupt_before=["ghost"])
    assert info.value.node == "ghost"


def test_edges_into_start_or_out_of_end_are_refused() -> None:
    g = build("a")
    with pytest.raises(GraphValidationError):
        g.add_edge("a", START)
    with pytest.raises(GraphValidationError):
        g.add_edge(END, "a")
    with pytest.raises(GraphValidationError):
        g.add_edge([START, "a"], "a")
    with pytest.raises(GraphValidationError):
        g.add_edge([], "a")


def test_validation_error_is_a_value_error() -> None:
    g = build("a")
    g.add_edge("a", END)
    with pytest.raises(ValueError):
        g.compile()


def test_schema_must_be_a_model_a_typeddict_or_a_dataclass() -> None:
    with pytest.raises(TypeError, match="pydantic model, a TypedDict or a dataclass"):
        StateGraph(dict)
