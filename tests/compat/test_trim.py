"""`trim_messages` with LangChain's arguments (issue 18, item 2).

For conversations without tool calls, flowgraph keeps exactly what
LangChain keeps, for any strategy, window, start_on, end_on,
include_system and allow_partial (a property test against LangChain
itself). With tool calls ours differs on purpose: a call and its results
are kept or dropped together.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flowgraph
from flowgraph import (
    AIMessage,
    HumanMessage,
    ScriptedChatModel,
    SystemMessage,
    ToolMessage,
    count_tokens_approximately,
    trim_messages,
)
from tests.compat._libs import Lib, has_langgraph, load

KINDS = {"system": "SystemMessage", "human": "HumanMessage", "ai": "AIMessage"}


def build(lib: Lib, conversation: list[tuple[str, str]]) -> list[Any]:
    return [getattr(lib, KINDS[k])(text, id=f"m{i}") for i, (k, text) in enumerate(conversation)]


def lines(messages: list[Any]) -> int:
    """A token counter both libraries can run: one token per line of text."""
    return sum(m.text.count("\n") + 1 for m in messages)


conversations = st.builds(
    lambda system, turns: ([("system", "be brief")] if system else []) + turns,
    st.booleans(),
    st.lists(
        st.tuples(
            st.sampled_from(["human", "ai"]),
            st.lists(st.sampled_from(["yes", "no", "maybe"]), min_size=1, max_size=3).map(
                "\n".join
            ),
        ),
        max_size=8,
    ),
)
types = st.one_of(
    st.none(), st.sampled_from(["human", "ai", "system"]), st.just(["human", "system"])
)


@pytest.mark.skipif(not has_langgraph(), reason="compares with langchain-core, not installed")
@settings(max_examples=300, deadline=None)
@given(
    conversation=conversations,
    max_tokens=st.integers(0, 14),
    strategy=st.sampled_from(["last", "first"]),
    include_system=st.booleans(),
    start_on=types,
    end_on=types,
    allow_partial=st.booleans(),
    counter=st.sampled_from(["len", "lines"]),
)
def test_the_same_messages_as_langchain_keeps(
    conversation: list[tuple[str, str]],
    max_tokens: int,
    strategy: str,
    include_system: bool,
    start_on: Any,
    end_on: Any,
    allow_partial: bool,
    counter: str,
) -> None:
    options: dict[str, Any] = {
        "max_tokens": max_tokens,
        "strategy": strategy,
        "end_on": end_on,
        "allow_partial": allow_partial,
        "token_counter": len if counter == "len" else lines,
    }
    if strategy == "last":  # LangChain takes these with "last" only
        options.update(include_system=include_system, start_on=start_on)
    theirs = load("langgraph").trim_messages(build(load("langgraph"), conversation), **options)
    ours = trim_messages(build(load("flowgraph"), conversation), **options)
    assert [(m.id, m.text) for m in ours] == [(m.id, m.text) for m in theirs]


CHAT = [
    ("system", "be brief"),
    ("human", "hi"),
    ("ai", "hello"),
    ("human", "weather?"),
    ("ai", "sunny\nand warm\nall week"),
]


def test_a_trimmer_made_without_messages(lib: Lib) -> None:
    trimmer = lib.trim_messages(
        max_tokens=3, strategy="last", token_counter=len, include_system=True, start_on="human"
    )
    kept = trimmer.invoke(build(lib, CHAT))
    assert [m.id for m in kept] == ["m0", "m3", "m4"]


def test_allow_partial_keeps_the_newest_lines(lib: Lib) -> None:
    options = {"token_counter": lines, "strategy": "last", "allow_partial": True}
    kept = lib.trim_messages(build(lib, CHAT), max_tokens=2, include_system=False, **options)
    assert [(m.id, m.text) for m in kept] == [("m4", "and warm\nall week")]
    kept = lib.trim_messages(build(lib, CHAT), max_tokens=2, include_system=True, **options)
    assert [(m.id, m.text) for m in kept] == [("m0", "be brief"), ("m4", "all week")]


def test_a_counter_of_one_message(lib: Lib) -> None:
    base = flowgraph.BaseMessage if lib.name == "flowgraph" else _langchain_base()

    def one(message: Any) -> int:
        return 1

    one.__annotations__["message"] = base  # the class itself, as an annotation evaluated at once

    kept = lib.trim_messages(build(lib, CHAT), max_tokens=2, token_counter=one, strategy="first")
    assert [m.id for m in kept] == ["m0", "m1"]


def test_approximate_and_a_model_as_counters() -> None:
    chat = build(load("flowgraph"), CHAT)
    budget = count_tokens_approximately(chat[-2:])
    expected = ["m3", "m4"]
    with_system = count_tokens_approximately([chat[0], chat[-1]])
    kept = trim_messages(chat, max_tokens=with_system, token_counter="approximate")
    assert [m.id for m in kept] == ["m0", *expected[1:]]
    by_model = trim_messages(
        chat, max_tokens=budget, token_counter=ScriptedChatModel(["x"]), include_system=False
    )
    assert [m.id for m in by_model] == expected
    with pytest.raises(ValueError, match="'approximate'"):
        trim_messages(chat, max_tokens=1, token_counter="exact")


def test_a_tool_call_and_its_result_stay_together() -> None:
    # LangChain keeps the result without its call here; a provider would reject that
    calls = [{"name": "get_weather", "args": {}, "id": "c1"}]
    chat = [
        SystemMessage("s", id="s"),
        HumanMessage("weather?", id="h"),
        AIMessage("", tool_calls=calls, id="a1"),
        ToolMessage("sunny", tool_call_id="c1", id="t"),
        AIMessage("Sunny.", id="a2"),
    ]
    kept = trim_messages(chat, max_tokens=3, token_counter=len, include_system=True)
    assert [m.id for m in kept] == ["s", "a2"]
    kept = trim_messages(chat, max_tokens=4, token_counter=len, include_system=True)
    assert [m.id for m in kept] == ["s", "a1", "t", "a2"]
    assert [
        m.id for m in trim_messages(chat, max_tokens=3, token_counter=len, strategy="first")
    ] == [
        "s",
        "h",
    ]


def test_our_own_arguments_still_work() -> None:
    chat = build(load("flowgraph"), CHAT)
    assert [m.id for m in trim_messages(chat, max_messages=2)] == ["m0", "m4"]
    assert [m.id for m in trim_messages(chat, max_messages=3, start_on="any")] == ["m0", "m3", "m4"]
    with pytest.raises(ValueError, match="strategy='last'"):
        trim_messages(chat, max_tokens=3, strategy="first", start_on="human")


def _langchain_base() -> type[Any]:
    from langchain_core.messages import BaseMessage as LangChainBaseMessage

    return LangChainBaseMessage
