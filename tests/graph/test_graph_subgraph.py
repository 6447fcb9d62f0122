"""A compiled graph used as a node of another graph: state shared by field name."""

from __future__ import annotations

import asyncio
import operator
import threading
from typing import Annotated, Any

import pytest
from pydantic import Field

from flowgraph import (
    END,
    START,
    AIMessage,
    Budget,
    HumanMessage,
    MessagesState,
    Send,
    StateGraph,
)
from flowgraph._context import charge_model_call, emit
from flowgraph.errors import BudgetExceededError, GraphRecursionError

try:  # the public path of DESIGN §6, once the package re-exports it
    from flowgraph.checkpoint import MemoryCheckpointer  # type: ignore[attr-defined]
except ImportError:
    from flowgraph.checkpoint.memory import MemoryCheckpointer

TIMEOUT = 5.0


class Parent(MessagesState):
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)
    parent_only: str = "untouched"


class Child(MessagesState):
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)
    scratch: str = ""


def child_graph(seen: list[Any] | None = None) -> Any:
    def think(state: Child) -> dict[str, Any]:
        if seen is not None:
            seen.append(([m.text for m in state.messages], list(state.notes)))
        return {"messages": [AIMessage("child thinks")], "notes": ["child"], "scratch": "x"}

    def answer(state: Child) -> dict[str, Any]:
        assert state.scratch == "x"  # the child's own field lives inside the child
        return {"messages": [AIMessage("child answers")]}

    g = StateGraph(Child)
    g.add_node("think", think)
    g.add_node("answer", answer)
    g.add_edge(START, "think").add_edge("think", "answer").add_edge("answer", END)
    return g.compile()


def parent_graph(child: Any, checkpointer: Any = None) -> Any:
    g = StateGraph(Parent)
    g.add_node("before", lambda s: {"messages": [AIMessage("parent before")], "notes": ["p1"]})
    g.add_node("child", child)
    g.add_node("after", lambda s: {"notes": [f"after saw {len(s.messages)} messages"]})
    g.add_edge(START, "before").add_edge("before", "child")
    g.add_edge("child", "after").add_edge("after", END)
    return g.compile(checkpointer=checkpointer)


def test_subgraph_final_state_goes_through_the_parent_s_reducers() -> None:
    """As in LangGraph: the child's whole state is the node's update. Messages merge by id
    (not doubled); an operator.add list the parent passed in is added again."""
    seen: list[Any] = []
    out = parent_graph(child_graph(seen)).invoke({"messages": [HumanMessage("hi")]})
    assert [m.text for m in out.messages] == [
        "hi",
        "parent before",
        "child thinks",
        "child answers",
    ]
    assert len({m.id for m in out.messages}) == 4
    assert out.notes == ["p1", "p1", "child", "after saw 4 messages"]
    assert out.parent_only == "untouched"
    assert not hasattr(out, "scratch")
    # the child started from the parent's shared fields
    assert seen == [(["hi", "parent before"], ["p1"])]


def test_subgraph_node_kind_and_async_run() -> None:
    app = parent_graph(child_graph())
    assert app.graph.nodes["child"]["kind"] == "subgraph"
    out = asyncio.run(app.ainvoke({"messages": ["hi"]}))
    assert [m.text for m in out.messages][-2:] == ["child thinks", "child answers"]


def test_subgraph_updates_appear_as_the_parent_node_s_update() -> None:
    parts = list(parent_graph(child_graph()).stream({"messages": ["hi"]}, mode="updates"))
    assert [(p.step, p.node) for p in parts] == [(1, "before"), (2, "child"), (3, "after")]
    child_update = parts[1].data
    assert [m.text for m in child_update["messages"]] == [
        "hi",
        "parent before",
        "child thinks",
        "child answers",
    ]
    assert child_update["notes"] == ["p1", "child"]
    assert "scratch" not in child_update  # the child's own field stays inside


def test_subgraph_message_ids_are_deterministic_for_a_thread() -> None:
    app = parent_graph(child_graph(), checkpointer=MemoryCheckpointer())
    first = app.invoke({"messages": ["hi"]}, thread_id="t")
    (start,) = [s.checkpoint_id for s in app.get_state_history("t") if s.step == 1]
    again = app.invoke(None, thread_id="t", checkpoint_id=start)
    assert [m.id for m in again.messages][:4] == [m.id for m in first.messages][:4]
    other = app.invoke({"messages": ["hi"]}, thread_id="other")
    assert not {m.id for m in other.messages} & {m.id for m in first.messages}


def test_subgraph_messages_stream_through_the_parent() -> None:
    async def token_model(state: Child) -> dict[str, Any]:
        emit("messages", "tok")
        return {"messages": [AIMessage("streamed")]}

    inner = StateGraph(Child)
    inner.add_node("model", token_model)
    inner.add_edge(START, "model").add_edge("model", END)
    g = StateGraph(Parent)
    g.add_node("child", inner.compile())
    g.add_edge(START, "child").add_edge("child", END)
    parts = list(g.compile().stream({}, mode=["messages", "updates"]))
    assert [(p.mode, p.node, p.step) for p in parts] == [
        ("messages", "child", 1),
        ("updates", "child", 1),
    ]
    assert parts[0].data == "tok"


def test_error_inside_a_subgraph_names_both_nodes() -> None:
    def broken(state: Child) -> None:
        raise ArithmeticError("inner failure")

    inner = StateGraph(Child)
    inner.add_node("broken", broken)
    inner.add_edge(START, "broken").add_edge("broken", END)
    g = StateGraph(Parent)
    g.add_node("child", inner.compile())
    g.add_edge(START, "child").add_edge("child", END)
    with pytest.raises(ArithmeticError) as info:
        g.compile().invoke({})
    notes = " ".join(info.value.__notes__)
    assert "'broken'" in notes and "'child'" in notes


def test_subgraph_used_twice_in_a_parent() -> None:
    child = child_graph()
    g = StateGraph(Parent)
    g.add_node("one", child)
    g.add_node("two", child)
    g.add_edge(START, "one").add_edge("one", "two").add_edge("two", END)
    out = g.compile().invoke({})
    assert [m.text for m in out.messages] == ["child thinks", "child answers"] * 2
    assert len({m.id for m in out.messages}) == 4
    # the second run starts from ["child"] and hands back ["child", "child"], added again
    assert out.notes == ["child", "child", "child"]


def test_a_budget_covers_the_subgraph_s_calls() -> None:
    def model(state: Any) -> dict[str, Any]:
        charge_model_call()
        return {"messages": [AIMessage("call")]}

    inner = StateGraph(Child)
    inner.add_node("m1", model)
    inner.add_node("m2", model)
    inner.add_edge(START, "m1").add_edge("m1", "m2").add_edge("m2", END)
    g = StateGraph(Parent)
    g.add_node("pre", model)
    g.add_node("child", inner.compile())
    g.add_edge(START, "pre").add_edge("pre", "child").add_edge("child", END)
    app = g.compile()
    assert len(app.invoke({}, budget=Budget(max_model_calls=3)).messages) == 3
    with pytest.raises(BudgetExceededError) as info:
        app.invoke({}, budget=Budget(max_model_calls=2))
    assert info.value.used == 2
    notes = " ".join(info.value.__notes__)
    assert "'m2'" in notes and "'child'" in notes


def test_subgraph_as_a_send_target_gets_the_send_argument() -> None:
    def write(state: Child) -> dict[str, Any]:
        return {"notes": [f"topic {state.scratch}"]}

    inner = StateGraph(Child)
    inner.add_node("write", write)
    inner.add_edge(START, "write").add_edge("write", END)
    g = StateGraph(Parent)
    g.add_node("child", inner.compile())
    g.add_conditional_edges(
        START, lambda s: [Send("child", {"scratch": t, "notes": []}) for t in ("x", "y")]
    )
    g.add_edge("child", END)
    assert g.compile().invoke({}).notes == ["topic x", "topic y"]


@pytest.mark.parametrize("sibling_kind", ["sync", "async"])
@pytest.mark.parametrize("api", ["invoke", "ainvoke"])
def test_a_sync_node_inside_a_subgraph_overlaps_a_sibling_of_the_parent_s_step(
    sibling_kind: str, api: str
) -> None:
    """The subgraph's sync node runs on a worker thread, as a parent's would: the event
    loop the parent's step shares stays free. Each side waits to see the other running."""
    inner_running = threading.Event()
    sibling_running = threading.Event()

    def inner(state: Child) -> dict[str, Any]:
        inner_running.set()
        assert sibling_running.wait(TIMEOUT), "the parent's sibling never ran meanwhile"
        return {"notes": ["inner"]}

    def sync_sibling(state: Parent) -> dict[str, Any]:
        sibling_running.set()
        assert inner_running.wait(TIMEOUT), "the subgraph's node never ran meanwhile"
        return {"notes": ["sibling"]}

    async def async_sibling(state: Parent) -> dict[str, Any]:
        sibling_running.set()
        assert await asyncio.to_thread(inner_running.wait, TIMEOUT)
        return {"notes": ["sibling"]}

    child = StateGraph(Child)
    child.add_node("inner", inner)
    child.add_edge(START, "inner").add_edge("inner", END)
    g = StateGraph(Parent)
    g.add_node("child", child.compile())  # first in the step: it starts before the sibling
    g.add_node("sibling", sync_sibling if sibling_kind == "sync" else async_sibling)
    g.add_edge(START, "child").add_edge(START, "sibling")
    g.add_edge("child", END).add_edge("sibling", END)
    app = g.compile()
    out = app.invoke({}) if api == "invoke" else asyncio.run(app.ainvoke({}))
    assert out.notes == ["inner", "sibling"]


def test_a_looping_subgraph_stops_at_its_own_step_limit() -> None:
    calls = {"spin": 0}

    def spin(state: Child) -> dict[str, Any]:
        calls["spin"] += 1
        if calls["spin"] > 1000:  # pragma: no cover - fails fast instead of hanging
            raise AssertionError("the subgraph ran past any step limit")
        return {"scratch": str(calls["spin"])}

    child = StateGraph(Child)
    child.add_node("spin", spin)
    child.add_edge(START, "spin")
    child.add_conditional_edges("spin", lambda s: "spin", ["spin", END])
    g = StateGraph(Parent)
    g.add_node("child", child.compile())
    g.add_edge(START, "child").add_edge("child", END)
    with pytest.raises(GraphRecursionError) as info:
        g.compile().invoke({})
    assert info.value.limit == 100
    assert info.value.nodes == ("spin",)
    assert calls["spin"] == 100
    assert "'child'" in " ".join(info.value.__notes__)
