"""Printing a message reads as LangChain's: the same `repr()` and `str()` for the shapes a
program prints (states, stream chunks, tool calls), compared with langchain_core itself."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core import messages as lc

from flowgraph import Interrupt
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    ReasoningPart,
    RemoveMessage,
    SystemMessage,
    TextPart,
    ToolCallChunk,
    ToolMessage,
    Usage,
)

CALL = {"name": "add", "args": {"a": 2}, "id": "c1"}
USAGE = {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}

PAIRS: list[tuple[Any, Any]] = [
    (HumanMessage("hello", id="h1"), lc.HumanMessage("hello", id="h1")),
    (HumanMessage("hi", name="bob"), lc.HumanMessage("hi", name="bob")),
    (HumanMessage([TextPart("hi")]), lc.HumanMessage([{"type": "text", "text": "hi"}])),
    (SystemMessage("be brief"), lc.SystemMessage("be brief")),
    (AIMessage("Hi there.", id="a1"), lc.AIMessage("Hi there.", id="a1")),
    (AIMessage("", tool_calls=[CALL]), lc.AIMessage("", tool_calls=[CALL])),
    (
        AIMessage("sure", name="agent", tool_calls=[CALL]),
        lc.AIMessage("sure", name="agent", tool_calls=[CALL]),
    ),
    (
        AIMessage(
            "x",
            usage=Usage(input_tokens=3, output_tokens=4),
            response_metadata={"finish_reason": "stop"},
        ),
        lc.AIMessage("x", usage_metadata=USAGE, response_metadata={"finish_reason": "stop"}),
    ),
    (
        AIMessage([TextPart("a"), ReasoningPart("r")]),
        lc.AIMessage([{"type": "text", "text": "a"}, {"type": "reasoning", "reasoning": "r"}]),
    ),
    (ToolMessage("4", tool_call_id="c1"), lc.ToolMessage("4", tool_call_id="c1")),
    (
        ToolMessage("4", tool_call_id="c1", name="add", id="t1"),
        lc.ToolMessage("4", tool_call_id="c1", name="add", id="t1"),
    ),
    (
        ToolMessage("no", tool_call_id="c1", status="error", artifact={"x": 1}),
        lc.ToolMessage("no", tool_call_id="c1", status="error", artifact={"x": 1}),
    ),
    (RemoveMessage("m1"), lc.RemoveMessage(id="m1")),
    (AIMessageChunk("Hel", id="a1"), lc.AIMessageChunk(content="Hel", id="a1")),
    (
        AIMessageChunk([ToolCallChunk(index=0, id="c1", name="add", args='{"a"')]),
        lc.AIMessageChunk(
            content="",
            tool_call_chunks=[
                {"index": 0, "id": "c1", "name": "add", "args": '{"a"', "type": "tool_call_chunk"}
            ],
        ),
    ),
    (
        AIMessageChunk([ToolCallChunk(index=0, args=' "sf"}')]),
        lc.AIMessageChunk(
            content="",
            tool_call_chunks=[
                {"index": 0, "id": None, "name": None, "args": ' "sf"}', "type": "tool_call_chunk"}
            ],
        ),
    ),
    (
        AIMessageChunk("", usage=Usage(input_tokens=3, output_tokens=4)),
        lc.AIMessageChunk(content="", usage_metadata=USAGE),
    ),
]


@pytest.mark.parametrize(("ours", "theirs"), PAIRS, ids=lambda m: type(m).__name__)
def test_repr_and_str_read_as_langchain(ours: Any, theirs: Any) -> None:
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


def test_a_state_holding_messages_prints_as_langchain() -> None:
    ours = {"messages": [HumanMessage("q", id="1"), AIMessage("a", id="2")]}
    theirs = {"messages": [lc.HumanMessage("q", id="1"), lc.AIMessage("a", id="2")]}
    assert str(ours) == str(theirs)


def test_tool_calls_print_as_langchain_dicts() -> None:
    calls = AIMessage("", tool_calls=[CALL]).tool_calls
    assert repr(calls) == repr(lc.AIMessage("", tool_calls=[CALL]).tool_calls)
    assert str(calls[0]) == "{'name': 'add', 'args': {'a': 2}, 'id': 'c1', 'type': 'tool_call'}"


def test_our_own_fields_show_when_set() -> None:
    assert repr(HumanMessage("x", metadata={"k": 1})).endswith(", metadata={'k': 1})")
    usage = Usage(input_tokens=1, output_tokens=2, cached_tokens=1, reasoning_tokens=2)
    assert "usage_metadata={'input_tokens': 1, 'output_tokens': 2, 'total_tokens': 3, " in repr(
        AIMessage("x", usage=usage)
    )
    assert (
        "'input_token_details': {'cache_read': 1}, 'output_token_details': {'reasoning': 2}}"
        in (repr(AIMessage("x", usage=usage)))
    )


def test_interrupt_prints_langgraph_fields() -> None:
    pause = Interrupt("proceed?", "abc-1-0-i0", "ask")
    assert repr(pause) == "Interrupt(value='proceed?', id='abc-1-0-i0', response_schema=None)"
    assert pause.response_schema is None
    assert pause.node == "ask"


def test_messages_state_prints_as_langgraphs_dict() -> None:
    from flowgraph import MessagesState

    class State(MessagesState):
        summary: str

    state = State.model_construct(messages=[HumanMessage("q", id="1")])  # as the engine builds it
    theirs = {"messages": [lc.HumanMessage("q", id="1")]}
    assert str(state) == repr(state) == str(theirs)  # an unset field is left out, as LangGraph's
    assert repr(State(messages=[], summary="s")) == "{'messages': [], 'summary': 's'}"
