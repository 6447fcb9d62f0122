"""A graph invoked inside another graph's node streams into that run, as a subgraph node's
steps do (LangGraph's "call a subgraph from a node")."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict

from flowgraph import START, StateGraph


class Inner(TypedDict):
    bar: str


class Outer(TypedDict):
    foo: str


def inner_graph() -> Any:
    g = StateGraph(Inner)
    g.add_node("shout", lambda s: {"bar": s["bar"].upper()})
    g.add_edge(START, "shout")
    return g.compile()


def outer_graph(call: Any) -> Any:
    g = StateGraph(Outer)
    g.add_node("delegate", call)
    g.add_edge(START, "delegate")
    return g.compile()


def test_an_invoked_graphs_steps_come_under_the_calling_tasks_namespace() -> None:
    inner = inner_graph()
    app = outer_graph(lambda s: {"foo": inner.invoke({"bar": s["foo"]})["bar"]})
    items = list(app.stream({"foo": "hi"}, subgraphs=True))
    assert [(ns[0].split(":")[0] if ns else None, chunk) for ns, chunk in items] == [
        ("delegate", {"shout": {"bar": "HI"}}),
        (None, {"delegate": {"foo": "HI"}}),
    ]
    # the namespace's task id is the calling task's (16 hex, as a subgraph node's)
    assert len(items[0][0][0].split(":")[1]) == 16
    # without subgraphs=True, only the caller's own items
    assert list(app.stream({"foo": "hi"})) == [{"delegate": {"foo": "HI"}}]
    assert app.invoke({"foo": "x"}) == {"foo": "X"}


def test_a_node_that_streams_the_inner_graph_itself_keeps_its_items() -> None:
    inner = inner_graph()
    seen: list[Any] = []

    def delegate(state: Outer) -> dict[str, str]:
        chunks = list(inner.stream({"bar": state["foo"]}))
        seen.extend(chunks)
        return {"foo": chunks[-1]["shout"]["bar"]}

    app = outer_graph(delegate)
    assert list(app.stream({"foo": "yo"}, subgraphs=True)) == [((), {"delegate": {"foo": "YO"}})]
    assert seen == [{"shout": {"bar": "YO"}}]
