"""A dataclass state schema (LangGraph takes one): nodes get an instance, callers dicts."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

import pytest
from pydantic import BaseModel

from flowgraph import END, START, StateGraph
from flowgraph.checkpoint import MemoryCheckpointer
from flowgraph.errors import InvalidUpdateError


@dataclass
class State:
    name: str
    visits: Annotated[list[str], operator.add] = field(default_factory=list)
    count: int = 0
    kind: ClassVar[str] = "not a field"


def test_nodes_get_an_instance_and_invoke_returns_a_dict() -> None:
    seen: list[Any] = []

    def visit(state: State) -> dict[str, Any]:
        seen.append(state)
        return {"visits": [state.name], "count": state.count + 1}

    g = StateGraph(State)
    g.add_node("visit", visit)
    g.add_edge(START, "visit").add_edge("visit", END)
    app = g.compile(checkpointer=MemoryCheckpointer())
    out = app.invoke({"name": "Lin"}, thread_id="t")
    assert seen == [State(name="Lin", visits=[], count=0)]  # defaults fill what is unset
    assert out == {"name": "Lin", "visits": ["Lin"], "count": 1}
    assert app.get_state("t").values == out
    again = app.invoke({"name": "Lin"}, thread_id="t")
    assert again["visits"] == ["Lin", "Lin"]  # the Annotated reducer merges


def test_a_required_field_left_out_or_a_bad_value_is_refused() -> None:
    g = StateGraph(State)
    g.add_node("visit", lambda s: {"count": 1})
    g.add_edge(START, "visit")
    app = g.compile()
    with pytest.raises(InvalidUpdateError, match=r"required field.*name"):
        app.invoke({})
    with pytest.raises(InvalidUpdateError, match="'name'"):
        app.invoke({"name": 3})
    with pytest.raises(InvalidUpdateError, match="'kind'"):
        app.invoke({"name": "a", "kind": "x"})  # a ClassVar is not a field


def test_a_subgraph_in_a_dataclass_graph_and_a_node_s_own_input_type() -> None:
    @dataclass
    class Visits:
        visits: list[str]

    seen: list[Any] = []
    inner = StateGraph(State)
    inner.add_node("deep", lambda s: {"visits": [f"deep {s.name}"]})
    inner.add_edge(START, "deep")
    g = StateGraph(State)
    g.add_node("team", inner.compile())
    g.add_node("read", lambda s: seen.append(s), input_schema=Visits)
    g.add_edge(START, "team").add_edge("team", "read")
    out = g.compile().invoke({"name": "x"})
    # the subgraph starts from the node's instance (defaults filled, as in LangGraph) and
    # its final state goes through the parent's operator.add (which started from [])
    assert out == {"name": "x", "visits": ["deep x"], "count": 0}
    assert seen == [Visits(visits=["deep x"])]


def test_pydantic_reducer_fields_start_empty_and_need_not_be_given() -> None:
    class Notes(BaseModel):
        name: str
        log: Annotated[list[str], operator.add]
        total: Annotated[int, operator.add]
        kept: Annotated[list[str], operator.add] = ["declared"]

    g = StateGraph(Notes)
    g.add_node("n", lambda s: {"total": 2})
    g.add_edge(START, "n")
    app = g.compile(checkpointer=MemoryCheckpointer())
    app.invoke({"name": "a"}, thread_id="t")
    values = app.get_state("t").values
    # as in LangGraph, but a declared default is kept (LangGraph starts it empty too)
    assert (values.log, values.total, values.kept) == ([], 2, ["declared"])
    with pytest.raises(InvalidUpdateError, match=r"required field.*name"):
        app.invoke({}, thread_id="other")
