"""State schemas, reducers and update checks as a run applies them (DESIGN §2, §9)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import BaseModel, Field

from flowgraph import (
    END,
    START,
    AIMessage,
    Command,
    HumanMessage,
    MessagesState,
    RemoveMessage,
    StateGraph,
    add_messages,
)
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.errors import InvalidUpdateError


class PState(MessagesState):
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)
    count: int = 0
    label: str = "start"


class TDState(TypedDict, total=False):
    messages: Annotated[list[Any], add_messages]
    notes: Annotated[list[str], operator.add]
    count: int


class Required(BaseModel):
    topic: str
    count: int = 0


class Bounded(BaseModel):
    level: Annotated[int, Field(ge=0, le=10)] = 0


def one_node(schema: type[Any], fn: Any, name: str = "n") -> Any:
    g = StateGraph(schema)
    g.add_node(name, fn)
    g.add_edge(START, name)
    g.add_edge(name, END)
    return g.compile()


def two_steps(schema: type[Any], first: Any, second: Any) -> Any:
    g = StateGraph(schema)
    g.add_node("first", first)
    g.add_node("second", second)
    g.add_edge(START, "first").add_edge("first", "second").add_edge("second", END)
    return g.compile()


# ------------------------------------------------------------------ schema types


def test_pydantic_schema_node_gets_instance_and_invoke_returns_instance() -> None:
    seen: list[Any] = []

    def node(state: PState) -> dict[str, Any]:
        seen.append(state)
        return {"count": state.count + 1}

    out = one_node(PState, node).invoke({"count": 41})
    assert type(seen[0]) is PState
    assert seen[0].count == 41
    assert seen[0].label == "start"  # defaults are filled in
    assert type(out) is PState
    assert out.count == 42


def test_typeddict_schema_node_gets_dict_and_invoke_returns_dict() -> None:
    seen: list[Any] = []

    def node(state: dict[str, Any]) -> dict[str, Any]:
        seen.append(state)
        return {"count": state["count"] + 1, "notes": ["n"]}

    out = one_node(TDState, node).invoke({"count": 1, "notes": ["in"]})
    assert type(seen[0]) is dict
    assert type(out) is dict
    # as in LangGraph, a reducer's field no one wrote shows its empty value
    assert out == {"messages": [], "notes": ["in", "n"], "count": 2}


def test_invoke_accepts_an_instance_of_the_schema() -> None:
    out = one_node(PState, lambda s: {"count": s.count * 2}).invoke(PState(count=21))
    assert out.count == 42


# ------------------------------------------------------------------ reducers


def test_reducer_fields_merge_and_plain_fields_are_replaced() -> None:
    app = two_steps(
        PState,
        lambda s: {"notes": ["a"], "label": "first", "messages": [HumanMessage("one")]},
        lambda s: {"notes": ["b"], "label": "second", "messages": [AIMessage("two")]},
    )
    out = app.invoke({"notes": ["input"], "messages": [HumanMessage("zero")]})
    assert out.notes == ["input", "a", "b"]
    assert out.label == "second"
    assert [m.text for m in out.messages] == ["zero", "one", "two"]


def test_typeddict_reducer_fields_merge() -> None:
    app = two_steps(
        TDState,
        lambda s: {"notes": ["a"], "messages": [("human", "hi")]},
        lambda s: {"notes": ["b"], "messages": [("ai", "yo")], "count": 3},
    )
    out = app.invoke({})
    assert out["notes"] == ["a", "b"]
    assert [type(m) for m in out["messages"]] == [HumanMessage, AIMessage]
    assert out["count"] == 3


def test_add_messages_replaces_by_id_and_removes() -> None:
    def edit(state: PState) -> dict[str, Any]:
        first, second = state.messages
        return {
            "messages": [
                AIMessage("edited", id=first.id),
                RemoveMessage(id=second.id),
                AIMessage("new"),
            ]
        }

    out = one_node(PState, edit).invoke({"messages": [AIMessage("orig"), HumanMessage("gone")]})
    assert [m.text for m in out.messages] == ["edited", "new"]
    assert len({m.id for m in out.messages}) == 2


def test_node_returning_none_changes_nothing() -> None:
    out = one_node(PState, lambda s: None).invoke({"count": 5, "notes": ["x"]})
    assert out.count == 5
    assert out.notes == ["x"]


def test_command_update_is_applied_like_a_dict() -> None:
    g = StateGraph(PState)
    g.add_node("b", lambda s: {"notes": ["b"]})
    g.add_node(
        "a", lambda s: Command(update={"notes": ["a"], "count": 7}, goto="b"), destinations=["b"]
    )
    g.add_edge(START, "a").add_edge("b", END)
    out = g.compile().invoke({})
    assert out.notes == ["a", "b"]
    assert out.count == 7


def test_node_returning_a_schema_instance_writes_the_fields_it_set() -> None:
    out = one_node(PState, lambda s: PState(count=9)).invoke({"label": "kept"})
    assert out.count == 9
    assert out.label == "kept"


# ------------------------------------------------------------------ update checks


def test_update_to_unknown_key_names_node_and_key() -> None:
    app = one_node(PState, lambda s: {"cuont": 1}, name="typo")
    with pytest.raises(InvalidUpdateError, match=r"'typo'.*'cuont'") as info:
        app.invoke({})
    assert info.value.node == "typo"
    assert info.value.key == "cuont"


def test_typeddict_update_to_unknown_key_names_node_and_key() -> None:
    app = one_node(TDState, lambda s: {"bogus": 1}, name="writer")
    with pytest.raises(InvalidUpdateError) as info:
        app.invoke({})
    assert (info.value.node, info.value.key) == ("writer", "bogus")


def test_value_the_schema_rejects_names_node_and_key() -> None:
    app = one_node(PState, lambda s: {"count": "many"}, name="counter")
    with pytest.raises(InvalidUpdateError, match=r"'counter'.*'count'") as info:
        app.invoke({})
    assert (info.value.node, info.value.key) == ("counter", "count")


def test_field_constraints_are_checked() -> None:
    assert one_node(Bounded, lambda s: {"level": 10}).invoke({}).level == 10
    with pytest.raises(InvalidUpdateError) as info:
        one_node(Bounded, lambda s: {"level": 11}, name="lvl").invoke({})
    assert (info.value.node, info.value.key) == ("lvl", "level")


def test_command_update_is_checked_too() -> None:
    g = StateGraph(PState)
    g.add_node("b", lambda s: None)
    g.add_node("a", lambda s: Command(update={"nope": 1}, goto="b"), destinations=["b"])
    g.add_edge(START, "a").add_edge("b", END)
    with pytest.raises(InvalidUpdateError) as info:
        g.compile().invoke({})
    assert (info.value.node, info.value.key) == ("a", "nope")


def test_non_message_in_message_field_names_node() -> None:
    app = one_node(PState, lambda s: {"messages": [object()]}, name="bad")
    with pytest.raises(InvalidUpdateError) as info:
        app.invoke({})
    assert (info.value.node, info.value.key) == ("bad", "messages")


@pytest.mark.parametrize("value", [["a", "list"], "text", 42, ("t", "u")])
def test_node_returning_something_else_names_the_node(value: Any) -> None:
    app = one_node(PState, lambda s: value, name="odd")
    with pytest.raises(InvalidUpdateError, match="Node 'odd' returned") as info:
        app.invoke({})
    assert info.value.node == "odd"


@pytest.mark.parametrize("value", [["a", "list"], "text", 42])
def test_typeddict_node_returning_something_else_names_the_node(value: Any) -> None:
    app = one_node(TDState, lambda s: value, name="odd")
    with pytest.raises(InvalidUpdateError, match="Node 'odd' returned") as info:
        app.invoke({})
    assert info.value.node == "odd"


@pytest.mark.parametrize(
    ("update", "key"),
    [({"notes": 5}, "notes"), ({"messages": [RemoveMessage(id="no-such-id")]}, "messages")],
)
def test_reducer_failure_names_the_node(update: dict[str, Any], key: str) -> None:
    app = one_node(PState, lambda s: update, name="writer")
    with pytest.raises((TypeError, ValueError)) as info:
        app.invoke({})
    described = str(info.value) + " ".join(getattr(info.value, "__notes__", []))
    assert "'writer'" in described
    assert f"'{key}'" in described


def test_required_field_missing_from_input() -> None:
    app = one_node(Required, lambda s: {"count": 1})
    with pytest.raises(InvalidUpdateError, match="topic") as info:
        app.invoke({})
    assert info.value.key == "topic"
    assert app.invoke({"topic": "t"}).count == 1


def test_invalid_input_is_refused_before_any_node_runs() -> None:
    ran: list[str] = []
    app = one_node(PState, lambda s: ran.append("n"))
    with pytest.raises(InvalidUpdateError) as info:
        app.invoke({"count": "lots"})
    assert info.value.key == "count"
    with pytest.raises(InvalidUpdateError) as info:
        app.invoke({"unknown": 1})
    assert info.value.key == "unknown"
    with pytest.raises(InvalidUpdateError):
        app.invoke(["not", "a", "dict"])
    assert ran == []


def test_each_run_starts_from_the_defaults() -> None:
    app = one_node(PState, lambda s: {"notes": ["n"], "count": s.count + 1})
    assert app.invoke({}).notes == ["n"]
    assert app.invoke({}).notes == ["n"]
    assert app.invoke({}).count == 1


def test_mutable_defaults_are_not_shared_between_runs() -> None:
    class Bag(BaseModel):
        items: list[str] = []

    def append_in_place(state: Bag) -> None:
        state.items.append("x")

    app = one_node(Bag, append_in_place)
    app.invoke({})
    assert Bag().items == []
    assert app.invoke({}).items == ["x"]


def test_node_returning_command_with_resume_names_the_node() -> None:
    app = one_node(PState, lambda s: Command(resume="yes"), name="confused")
    with pytest.raises(InvalidUpdateError, match="resume") as info:
        app.invoke({})
    assert info.value.node == "confused"


def test_command_update_that_is_not_a_dict_names_the_node() -> None:
    g = StateGraph(PState)
    g.add_node("b", lambda s: None)
    g.add_node("a", lambda s: Command(update=["count", 1], goto="b"), destinations=["b"])
    g.add_edge(START, "a").add_edge("b", END)
    with pytest.raises(InvalidUpdateError, match="update") as info:
        g.compile().invoke({})
    assert info.value.node == "a"


def test_a_required_field_left_unset_by_the_input_or_a_command_is_named() -> None:
    class Order(BaseModel):
        item: str
        note: str = ""

    graph = StateGraph(Order)
    graph.add_node("pack", lambda state: {"note": f"packed {state.item}"})
    graph.add_edge(START, "pack").add_edge("pack", END)
    app = graph.compile(checkpointer=MemoryCheckpointer())

    with pytest.raises(InvalidUpdateError) as by_input:
        app.invoke({"note": "x"}, thread_id="t1")
    assert str(by_input.value).startswith(
        "The input leaves required field(s) item of Order unset; pass them to invoke() or "
        "give them defaults"
    )
    assert (by_input.value.node, by_input.value.key) == (START, "item")
    with pytest.raises(InvalidUpdateError) as by_command:
        app.invoke(Command(update={"note": "y"}), thread_id="t2")
    assert str(by_command.value).startswith(
        "The Command's update leaves required field(s) item of Order unset; pass them in "
        "update=... or give them defaults"
    )
    assert app.invoke({"item": "tea"}, thread_id="t3").note == "packed tea"
