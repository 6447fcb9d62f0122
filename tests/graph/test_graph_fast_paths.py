"""The run loop's shortcuts must agree with its general paths.

A step with one task runs without gather; a node name routes without the
general scheduling helper; a node with only plain edges routes along its
compiled successors; a conversation passed back in as input is checked and
merged by C-level passes. Each test runs the same work once through the
shortcut and once through the general path, and compares what came out
(state, message ids, errors), so a shortcut that drifted would fail here.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest

from flowgraph import (
    END,
    START,
    AIMessage,
    HumanMessage,
    MessagesState,
    StateGraph,
    ToolMessage,
)
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.errors import GraphValidationError, InvalidMessageError
from flowgraph.messages import RemoveMessage


def _say(text: str) -> Any:
    def node(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"{text} {len(state.messages)}")]}

    return node


def _quiet(state: Any) -> None:
    return None


def _linear(checkpointer: Any = None) -> Any:
    """START -> a -> b -> END: every step has one task (the shortcut)."""
    graph = StateGraph(MessagesState)
    graph.add_node("a", _say("a"))
    graph.add_node("b", _say("b"))
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    graph.add_edge("b", END)
    return graph.compile(checkpointer=checkpointer)


def _with_a_sibling(checkpointer: Any = None) -> Any:
    """The same, but `a` runs beside a silent sibling: its steps take the general path."""
    graph = StateGraph(MessagesState)
    graph.add_node("a", _say("a"))
    graph.add_node("quiet", _quiet)
    graph.add_node("b", _say("b"))
    graph.add_edge(START, "a")
    graph.add_edge(START, "quiet")
    graph.add_edge("quiet", END)
    graph.add_edge("a", "b")
    graph.add_edge("b", END)
    return graph.compile(checkpointer=checkpointer)


def _summary(state: Any) -> list[tuple[str, str, str]]:
    """Each message's kind, text and id past the run's scope key: `<step>-<task>-<position>`."""
    return [(m.type, m.text, m.id.split("-", 1)[1]) for m in state.messages]


def test_a_one_task_step_merges_and_names_messages_as_a_wider_step_does() -> None:
    thread = {"thread_id": "t"}
    single = _linear(MemoryCheckpointer()).invoke({"messages": [HumanMessage("hi")]}, **thread)
    wide = _with_a_sibling(MemoryCheckpointer()).invoke(
        {"messages": [HumanMessage("hi")]}, **thread
    )
    assert _summary(single) == [
        ("human", "hi", "0-0-0"),
        ("ai", "a 1", "1-0-0"),
        ("ai", "b 2", "2-0-0"),
    ]
    assert _summary(single) == _summary(wide)  # `a` is task 0 of step 1 in both


def test_a_failing_lone_task_is_reported_as_in_a_wider_step() -> None:
    def broken(state: Any) -> dict[str, Any]:
        raise RuntimeError("boom")

    def build(with_sibling: bool) -> Any:
        graph = StateGraph(MessagesState)
        graph.add_node("broken", broken)
        graph.add_edge(START, "broken")
        graph.add_edge("broken", END)
        if with_sibling:
            graph.add_node("quiet", _quiet)
            graph.add_edge(START, "quiet")
            graph.add_edge("quiet", END)
        return graph.compile()

    errors = []
    for with_sibling in (False, True):
        with pytest.raises(RuntimeError, match="boom") as caught:
            build(with_sibling).invoke({"messages": []})
        errors.append(caught.value.__notes__)
    assert errors[0] == errors[1] == ["(in node 'broken', step 1, attempt 1)"]


class Route(enum.StrEnum):
    """A branch may return a str subclass: it takes the general scheduling path."""

    A = "a"
    MISSING = "nowhere"


def _routing_to(target: str, path_map: list[str] | None) -> StateGraph:
    """START -> start, whose branch returns `target`; a -> END."""
    graph = StateGraph(MessagesState)
    graph.add_node("start", _quiet)
    graph.add_node("a", _say("a"))
    graph.add_edge(START, "start")
    graph.add_conditional_edges("start", lambda state: target, path_map)
    graph.add_edge("a", END)
    return graph


@pytest.mark.parametrize("target", ["a", Route.A])
def test_a_branch_routes_a_plain_name_and_a_str_subclass_alike(target: str) -> None:
    out = _routing_to(target, ["a"]).compile().invoke({"messages": [HumanMessage("hi")]})
    assert [m.text for m in out.messages] == ["hi", "a 1"]


@pytest.mark.parametrize("target", ["nowhere", Route.MISSING])
def test_an_unknown_target_fails_alike_on_both_paths(target: str) -> None:
    with pytest.raises(GraphValidationError) as caught:
        _routing_to(target, None).compile().invoke({"messages": []})
    assert str(caught.value) == (
        f"Node 'start' routed to '{target}', which is not a node; known nodes: a, start (or END)"
    )
    assert caught.value.node == "start"


def test_a_conversation_passed_back_in_keeps_its_ids_and_names_only_new_messages() -> None:
    app = _linear()
    first = app.invoke({"messages": [HumanMessage("one")]})
    history = list(first.messages)
    new = HumanMessage("two")
    again = app.invoke({"messages": [*history, new]})
    assert [m.id for m in again.messages[:3]] == [m.id for m in history]
    assert again.messages[3].text == "two" and again.messages[3].id is not None
    assert new.id is None  # the caller's message is never changed
    assert len({m.id for m in again.messages}) == len(again.messages) == 6


def test_an_input_with_a_repeated_id_merges_by_id_as_the_general_merge_does() -> None:
    app = _linear()
    first = HumanMessage("first", id="same")
    second = HumanMessage("second", id="same")
    out = app.invoke({"messages": [first, second]})
    assert [(m.id, m.text) for m in out.messages[:1]] == [("same", "second")]
    # the merged list still merges by id afterwards: replacing the answer keeps its place
    answer = out.messages[1]
    replaced = AIMessage("edited", id=answer.id)
    tool = ToolMessage("r", tool_call_id="c")
    later = app.invoke({"messages": [*out.messages, replaced, tool]})
    assert [m.text for m in later.messages[:4]] == ["second", "edited", "b 2", "r"]


def test_an_input_removing_an_unknown_message_fails_as_the_merge_says() -> None:
    with pytest.raises(InvalidMessageError, match="RemoveMessage names id 'gone'"):
        _linear().invoke({"messages": [HumanMessage("hi", id="h"), RemoveMessage("gone")]})


def test_an_input_merged_into_a_thread_with_history_keeps_merging_by_id() -> None:
    app = _linear(MemoryCheckpointer())
    first = app.invoke({"messages": [HumanMessage("one", id="h1")]}, thread_id="t")
    edited = HumanMessage("one, edited", id="h1")
    out = app.invoke({"messages": [edited, HumanMessage("two")]}, thread_id="t")
    texts = [m.text for m in out.messages]
    assert texts[:3] == ["one, edited", "a 1", "b 2"] and texts[3] == "two"
    assert [m.id for m in out.messages[:3]] == [m.id for m in first.messages]


# -- id assignment: the input's and a node output's shortcuts against the general way ---


def _ids_by_both_ways(messages: list[Any], *, positions: bool) -> tuple[list[Any], list[Any]]:
    """`check_update` on a plain list (the shortcuts) and on a MessageList (the general way),
    each under a fresh id factory of the same scope, so both number new ids alike."""
    from flowgraph._context import message_id_factory
    from flowgraph._ids import StepIds
    from flowgraph.graph._core.schema import StateAdapter
    from flowgraph.reducers import MessageList

    state = StateAdapter(MessagesState)
    outcomes = []
    for value in (list(messages), MessageList(messages)):
        token = message_id_factory.set(StepIds("k", 0, 0))
        try:
            outcomes.append(state.check_update(START, {"messages": value}, positions=positions))
        finally:
            message_id_factory.reset(token)
    return outcomes[0]["messages"], outcomes[1]["messages"]


def _known_positions(messages: list[Any]) -> dict[str, int] | None:
    from flowgraph.reducers import MessageList

    return messages._positions if isinstance(messages, MessageList) else None


_SHAPES = {
    "all ids set": [HumanMessage("a", id="1"), AIMessage("b", id="2")],
    "one new at the end": [HumanMessage("a", id="1"), AIMessage("b", id="2"), HumanMessage("c")],
    "one new first": [HumanMessage("a"), AIMessage("b", id="2")],
    "several new": [HumanMessage("a"), AIMessage("b", id="2"), HumanMessage("c")],
    "a repeated id": [HumanMessage("a", id="1"), AIMessage("b", id="1"), HumanMessage("c")],
    "a new id already there": [HumanMessage("a", id="k-0-0-0"), HumanMessage("b")],
    "an empty id": [HumanMessage("a", id=""), HumanMessage("b")],
    "empty": [],
}


@pytest.mark.parametrize("shape", list(_SHAPES))
@pytest.mark.parametrize("positions", [True, False])
def test_id_assignment_shortcuts_agree_with_the_general_way(shape: str, positions: bool) -> None:
    from flowgraph.reducers import add_messages

    given = _SHAPES[shape]
    before = [(m.id, m.text) for m in given]
    fast, general = _ids_by_both_ways(given, positions=positions)
    assert [(m.id, m.text, m.model_fields_set) for m in fast] == [
        (m.id, m.text, m.model_fields_set) for m in general
    ]
    assert all(a is b for a, b in zip(fast, general, strict=True) if a.id in {"1", "2", ""})
    assert [(m.id, m.text) for m in given] == before  # the caller's messages are untouched
    fast_positions, general_positions = _known_positions(fast), _known_positions(general)
    assert fast_positions == general_positions
    if fast_positions is not None:
        assert fast_positions == {m.id: i for i, m in enumerate(fast)}
    merged_fast, merged_general = add_messages([], fast), add_messages([], general)
    assert [(m.id, m.text) for m in merged_fast] == [(m.id, m.text) for m in merged_general]


def test_the_input_shortcut_names_the_one_new_message_as_the_general_way() -> None:
    fast, _ = _ids_by_both_ways(_SHAPES["one new at the end"], positions=True)
    assert [m.id for m in fast] == ["1", "2", "k-0-0-0"]
    assert _known_positions(fast) == {"1": 0, "2": 1, "k-0-0-0": 2}
    repeated, _ = _ids_by_both_ways(_SHAPES["a new id already there"], positions=True)
    assert _known_positions(repeated) is None  # left to the merge, which keeps the later one


def test_merging_into_a_remembering_list_leaves_it_as_it_was_and_knows_the_new_positions() -> None:
    from flowgraph.reducers import MessageList, add_messages

    left = add_messages([], [HumanMessage("a", id="1"), AIMessage("b", id="2")])
    assert isinstance(left, MessageList)
    merged = add_messages(left, [AIMessage("b2", id="2"), HumanMessage("c", id="3")])
    assert [(m.id, m.text) for m in left] == [("1", "a"), ("2", "b")]
    assert [(m.id, m.text) for m in merged] == [("1", "a"), ("2", "b2"), ("3", "c")]
    assert isinstance(merged, MessageList)
    assert merged._positions == {"1": 0, "2": 1, "3": 2}
    again = add_messages(merged, [RemoveMessage("1"), HumanMessage("d", id="4")])
    assert [(m.id, m.text) for m in again] == [("2", "b2"), ("3", "c"), ("4", "d")]
    assert again._positions == {"2": 0, "3": 1, "4": 2}  # type: ignore[attr-defined]
    assert [m.id for m in merged] == ["1", "2", "3"]


# -- many tasks writing messages: one merge per field --------------------------------


def _fan_out(writes: list[list[Any]]) -> Any:
    """START -> a fan-out of `len(writes)` Sends, each worker writing its list of messages."""
    from flowgraph import Send

    graph = StateGraph(MessagesState)
    graph.add_node("start", lambda state: None)
    graph.add_node("worker", lambda arg: {"messages": writes[arg["i"]]})
    graph.add_edge(START, "start")
    graph.add_conditional_edges(
        "start", lambda state: [Send("worker", {"i": i}) for i in range(len(writes))], ["worker"]
    )
    graph.add_edge("worker", END)
    return graph.compile()


def _one_task_at_a_time(start: list[Any], writes: list[list[Any]]) -> list[Any]:
    from flowgraph import add_messages

    merged: list[Any] = start
    for update in writes:
        merged = add_messages(merged, update)
    return merged


def test_a_fan_out_merges_its_messages_as_one_task_after_another() -> None:
    """Later workers replace and remove what earlier ones (and the input) wrote."""
    writes = [
        [AIMessage("first", id="a")],
        [AIMessage("second", id="b"), AIMessage("edited input", id="in")],
        [RemoveMessage("a"), AIMessage("third", id="c")],
        [AIMessage("second, replaced", id="b")],
    ]
    start = [HumanMessage("input", id="in"), HumanMessage("kept", id="k")]
    out = _fan_out(writes).invoke({"messages": start})
    expected = _one_task_at_a_time(start, writes)
    assert [(m.id, m.text) for m in out.messages] == [(m.id, m.text) for m in expected]
    assert [m.id for m in out.messages] == ["in", "k", "b", "c"]


def test_a_fan_out_worker_whose_removal_fails_is_named() -> None:
    writes = [[AIMessage("one", id="a")], [AIMessage("two", id="b")], [RemoveMessage("nope")]]
    with pytest.raises(InvalidMessageError, match="RemoveMessage names id 'nope'") as caught:
        _fan_out(writes).invoke({"messages": [HumanMessage("hi", id="h")]})
    assert any("node 'worker' wrote to 'messages'" in note for note in caught.value.__notes__)


def test_a_fan_out_keeps_task_order_where_workers_write_the_same_ids() -> None:
    writes = [
        [AIMessage("one", id="x"), AIMessage("only", id="y")],
        [AIMessage("two", id="x")],
        [AIMessage("three", id="x"), AIMessage("last", id="z")],
    ]
    out = _fan_out(writes).invoke({"messages": [HumanMessage("hi", id="h")]})
    assert [(m.id, m.text) for m in out.messages] == [
        ("h", "hi"),
        ("x", "three"),
        ("y", "only"),
        ("z", "last"),
    ]
