"""trim_messages: message and token windows that keep the system message and tool blocks whole."""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowgraph import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ImagePart,
    InvalidToolCall,
    RemoveMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from flowgraph.nodes import _trim as trim_module
from flowgraph.nodes import count_tokens_approximately, tiktoken_counter, trim_messages

SYS = SystemMessage("You are terse.", id="sys")


def ai_calls(id_: str, *call_ids: str) -> AIMessage:
    return AIMessage("", id=id_, tool_calls=[ToolCall(id=c, name="t", args={}) for c in call_ids])


def answer(call_id: str) -> ToolMessage:
    return ToolMessage(f"result {call_id}", tool_call_id=call_id, id=f"t-{call_id}")


CONVERSATION = [
    SYS,
    HumanMessage("weather in Paris and Tokyo?", id="h1"),
    ai_calls("a1", "c1", "c2"),
    answer("c1"),
    answer("c2"),
    AIMessage("Paris sunny, Tokyo rain.", id="a2"),
    HumanMessage("thanks", id="h2"),
    AIMessage("welcome", id="a3"),
]


def ids(messages: Sequence[Any]) -> list[str]:
    return [m.id for m in messages]


def one_each(messages: Sequence[BaseMessage]) -> int:
    return len(messages)


# ------------------------------------------------------------------ message window


def test_no_limit_keeps_everything_and_copies() -> None:
    kept = trim_messages(CONVERSATION)
    assert kept == CONVERSATION
    assert kept is not CONVERSATION


@pytest.mark.parametrize(
    ("max_messages", "expected"),
    [
        (1, ["sys"]),
        (2, ["sys", "a3"]),
        (3, ["sys", "h2", "a3"]),
        (4, ["sys", "a2", "h2", "a3"]),
        # the tool block (a1, c1, c2) is three messages: it fits whole or not at all
        (5, ["sys", "a2", "h2", "a3"]),
        (6, ["sys", "a2", "h2", "a3"]),
        (7, ["sys", "a1", "t-c1", "t-c2", "a2", "h2", "a3"]),
        (8, ids(CONVERSATION)),
        (100, ids(CONVERSATION)),
    ],
)
def test_message_window_counts_the_system_message(max_messages: int, expected: list[str]) -> None:
    kept = trim_messages(CONVERSATION, max_messages=max_messages)
    assert ids(kept) == expected
    assert len(kept) <= max_messages


def test_without_a_system_message() -> None:
    assert ids(trim_messages(CONVERSATION[1:], max_messages=2)) == ["h2", "a3"]


def test_include_system_false_makes_it_an_ordinary_message() -> None:
    # as in LangChain: kept only when the window reaches back to it
    assert ids(trim_messages(CONVERSATION, max_messages=2, include_system=False)) == ["h2", "a3"]
    assert ids(trim_messages(CONVERSATION, include_system=False)) == ids(CONVERSATION)


def test_start_on_human() -> None:
    assert ids(trim_messages(CONVERSATION, max_messages=4, start_on="human")) == [
        "sys",
        "h2",
        "a3",
    ]
    assert ids(trim_messages(CONVERSATION, max_messages=7, start_on="human")) == [
        "sys",
        "h2",
        "a3",
    ]


def test_a_pending_tool_call_stays_with_its_partial_answers() -> None:
    messages = [SYS, HumanMessage("go", id="h"), ai_calls("a", "c1", "c2"), answer("c1")]
    assert ids(trim_messages(messages, max_messages=2)) == ["sys"]
    assert ids(trim_messages(messages, max_messages=3)) == ["sys", "a", "t-c1"]


def test_invalid_tool_calls_keep_their_answers() -> None:
    ai = AIMessage("", id="a", invalid_tool_calls=[InvalidToolCall(id="bad", name="t", args="{")])
    messages = [HumanMessage("go", id="h"), ai, answer("bad")]
    assert ids(trim_messages(messages, max_messages=1)) == []
    assert ids(trim_messages(messages, max_messages=2)) == ["a", "t-bad"]


# ------------------------------------------------------------------ token window


def test_token_window_with_a_custom_counter() -> None:
    assert ids(trim_messages(CONVERSATION, max_tokens=3, token_counter=one_each)) == [
        "sys",
        "h2",
        "a3",
    ]
    assert ids(trim_messages(CONVERSATION, max_tokens=0, token_counter=one_each)) == ["sys"]


def test_both_windows_the_tighter_wins() -> None:
    kept = trim_messages(CONVERSATION, max_messages=7, max_tokens=4, token_counter=one_each)
    assert ids(kept) == ["sys", "a2", "h2", "a3"]


def test_token_window_with_the_default_counter() -> None:
    budget = count_tokens_approximately([SYS, *CONVERSATION[-3:]])
    kept = trim_messages(CONVERSATION, max_tokens=budget)
    assert ids(kept) == ["sys", "a2", "h2", "a3"]
    assert ids(trim_messages(CONVERSATION, max_tokens=budget - 1)) == ["sys", "h2", "a3"]


def test_approximate_counter() -> None:
    # LangChain's estimate: (text + OpenAI role + name + calls or call id) / 4, rounded up
    # per message, plus 3 a message and 85 a media part
    assert count_tokens_approximately([]) == 0
    assert count_tokens_approximately([HumanMessage("abcd")]) == 3 + 2  # "user" + "abcd"
    assert count_tokens_approximately([HumanMessage("abcd", name="Al")]) == 3 + 3
    assert count_tokens_approximately([HumanMessage("abcde")]) == 3 + 3
    assert count_tokens_approximately([ToolMessage("abcd", tool_call_id="c1")]) == 3 + 3
    image = HumanMessage(["look", ImagePart(url="https://example.com/a.png")])
    assert count_tokens_approximately([image]) == 3 + 2 + 85
    call = AIMessage("", tool_calls=[ToolCall(id="c", name="tool", args={"k": "v"})])
    # "assistant" + "[{'name': 'tool', 'args': {'k': 'v'}, 'id': 'c', 'type': 'tool_call'}]"
    assert count_tokens_approximately([call]) == 3 + math.ceil((9 + 70) / 4)
    assert count_tokens_approximately([SYS, SYS]) == 2 * count_tokens_approximately([SYS])


class FakeEncoding:
    """One token per whitespace-separated word."""

    def encode(self, text: str) -> list[str]:
        return text.split()


def fake_tiktoken(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    module = types.ModuleType("tiktoken")

    def encoding_for_model(name: str) -> FakeEncoding:
        asked.append(f"model:{name}")
        if not name.startswith("gpt-"):
            raise KeyError(name)
        return FakeEncoding()

    def get_encoding(name: str) -> FakeEncoding:
        asked.append(f"encoding:{name}")
        return FakeEncoding()

    module.encoding_for_model = encoding_for_model  # type: ignore[attr-defined]
    module.get_encoding = get_encoding  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiktoken", module)
    trim_module._encoding.cache_clear()
    return asked


def test_tiktoken_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = fake_tiktoken(monkeypatch)
    try:
        count = tiktoken_counter("gpt-4o")
        assert count([HumanMessage("one two three", name="Al")]) == 3 + 3 + 1
        tiktoken_counter("cl100k_base")
        assert asked == ["model:gpt-4o", "model:cl100k_base", "encoding:cl100k_base"]
        kept = trim_messages(CONVERSATION, max_tokens=3 + 3 + 3 + 1, token_counter=count)
        assert ids(kept) == ["sys", "a3"]
    finally:
        trim_module._encoding.cache_clear()


def test_tiktoken_missing_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import fails
    trim_module._encoding.cache_clear()
    try:
        with pytest.raises(ImportError, match="pip install tiktoken"):
            tiktoken_counter()
    finally:
        trim_module._encoding.cache_clear()


# ------------------------------------------------------------------ input handling


def test_message_like_inputs_are_coerced() -> None:
    kept = trim_messages([("system", "s"), ("user", "a"), ("assistant", "b")], max_messages=2)
    assert [(type(m), m.text) for m in kept] == [(SystemMessage, "s"), (AIMessage, "b")]


def test_errors() -> None:
    with pytest.raises(ValueError, match="max_messages must be at least 1"):
        trim_messages(CONVERSATION, max_messages=0)
    with pytest.raises(ValueError, match="max_tokens must not be negative"):
        trim_messages(CONVERSATION, max_tokens=-1)
    with pytest.raises(ValueError, match="a RemoveMessage is an update"):
        trim_messages([HumanMessage("x"), RemoveMessage("x")])


# ------------------------------------------------------------------ invariants


@st.composite
def conversations(draw: st.DrawFn) -> list[BaseMessage]:
    """A valid conversation: tool answers follow their call; only the last block may be open."""
    messages: list[BaseMessage] = []
    if draw(st.booleans()):
        messages.append(SystemMessage("system " * draw(st.integers(0, 30)), id="sys"))
    turns = draw(st.integers(0, 14))
    calls = 0
    words = st.text("ab çd 语\n", max_size=60)
    for turn in range(turns):
        kind = draw(st.sampled_from(["human", "ai", "tools", "invalid"]))
        text = draw(words)
        if kind == "human":
            messages.append(HumanMessage(text, id=f"h{turn}"))
        elif kind == "ai":
            messages.append(AIMessage(text, id=f"a{turn}"))
        else:
            n = draw(st.integers(1, 3))
            call_ids = [f"c{calls + i}" for i in range(n)]
            calls += n
            if kind == "tools":
                messages.append(ai_calls(f"a{turn}", *call_ids))
            else:
                invalid = [InvalidToolCall(id=c, name="t", args="{") for c in call_ids]
                messages.append(AIMessage(text, id=f"a{turn}", invalid_tool_calls=invalid))
            is_last = turn == turns - 1
            answered = draw(st.integers(0, n)) if is_last else n
            messages.extend(
                ToolMessage(draw(words), tool_call_id=c, id=f"t-{c}") for c in call_ids[:answered]
            )
    return messages


def call_ids_of(message: BaseMessage) -> set[str]:
    if not isinstance(message, AIMessage):
        return set()
    found = {c.id for c in message.tool_calls}
    return found | {c.id for c in message.invalid_tool_calls if c.id}


def check_blocks_whole(source: list[BaseMessage], kept: list[BaseMessage]) -> None:
    kept_ids = set(ids(kept))
    for position, message in enumerate(kept):
        if isinstance(message, ToolMessage):
            owners = [m for m in kept[:position] if message.tool_call_id in call_ids_of(m)]
            assert owners, f"orphan tool message {message.id}"
    for message in source:
        if message.id in kept_ids and call_ids_of(message):
            answers = [m for m in source if isinstance(m, ToolMessage)]
            for tool_message in answers:
                if tool_message.tool_call_id in call_ids_of(message):
                    assert tool_message.id in kept_ids, f"{tool_message.id} lost its call"


def block_before(rest: list[BaseMessage], cut: int) -> list[BaseMessage]:
    """The block that ends just before rest[cut]: tool answers go back to their call."""
    start = cut - 1
    while start > 0 and isinstance(rest[start], ToolMessage):
        start -= 1
    return rest[start:cut]


@settings(max_examples=150, deadline=None)
@given(
    conversations(),
    st.one_of(st.none(), st.integers(1, 12)),
    st.one_of(st.none(), st.integers(0, 200)),
)
def test_trim_invariants(
    source: list[BaseMessage], max_messages: int | None, max_tokens: int | None
) -> None:
    kept = trim_messages(source, max_messages=max_messages, max_tokens=max_tokens)
    has_system = bool(source) and isinstance(source[0], SystemMessage)
    system = source[:1] if has_system else []
    rest = source[len(system) :]

    # the system message is kept, first
    assert kept[: len(system)] == system
    tail = kept[len(system) :]
    # the rest is a suffix of the conversation: the newest messages, in order
    assert tail == (rest[len(rest) - len(tail) :] if tail else [])
    # a call and its answers stay together
    check_blocks_whole(source, kept)
    # the windows are respected (the system message alone may exceed them)
    if max_messages is not None:
        assert len(kept) <= max(max_messages, len(system))
    if max_tokens is not None and tail:
        assert count_tokens_approximately(kept) <= max_tokens
    # and the window is as large as it can be: the next older block does not fit
    cut = len(rest) - len(tail)
    if cut > 0:
        block = block_before(rest, cut)
        too_many = max_messages is not None and len(kept) + len(block) > max_messages
        too_long = (
            max_tokens is not None
            and count_tokens_approximately(kept) + count_tokens_approximately(block) > max_tokens
        )
        assert too_many or too_long
    # trimming again changes nothing
    assert trim_messages(kept, max_messages=max_messages, max_tokens=max_tokens) == kept


@settings(max_examples=60, deadline=None)
@given(conversations(), st.integers(1, 10))
def test_start_on_human_invariants(source: list[BaseMessage], max_messages: int) -> None:
    kept = trim_messages(source, max_messages=max_messages, start_on="human")
    tail = kept[1:] if kept and isinstance(kept[0], SystemMessage) else kept
    assert not tail or isinstance(tail[0], HumanMessage)
    check_blocks_whole(source, kept)
