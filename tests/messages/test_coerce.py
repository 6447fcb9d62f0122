"""Coercion: messages from dicts, (role, content) tuples and strings, in both worlds' shapes."""

from __future__ import annotations

import base64
from typing import Any

import pytest

import flowgraph.messages._from_openai as openai_module
from flowgraph.errors import InvalidMessageError
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    ImagePart,
    ReasoningPart,
    RemoveMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolCallChunk,
    ToolCallPart,
    ToolMessage,
    coerce_message,
    coerce_messages,
)


@pytest.mark.parametrize(
    ("role", "cls"),
    [
        ("user", HumanMessage),
        ("human", HumanMessage),
        ("assistant", AIMessage),
        ("ai", AIMessage),
        ("system", SystemMessage),
        ("developer", SystemMessage),
    ],
)
def test_role_names_of_both_worlds(role: str, cls: type[Any]) -> None:
    assert coerce_message((role, "x")) == cls("x")
    assert coerce_message({"role": role, "content": "x", "id": "m1"}) == cls("x", id="m1")


def test_type_dicts_and_tool_role() -> None:
    assert coerce_message({"type": "human", "content": "x"}) == HumanMessage("x")
    assert coerce_message({"role": "tool", "content": "r", "tool_call_id": "c"}) == ToolMessage(
        "r", tool_call_id="c"
    )
    assert coerce_message({"type": "remove", "id": "m1"}) == RemoveMessage("m1")


def test_messages_pass_through_unchanged() -> None:
    message = AIMessage("x", id="a")
    assert coerce_message(message) is message
    remove = RemoveMessage("a")
    assert coerce_message(remove) is remove


def test_a_bare_string_is_a_human_message() -> None:
    assert coerce_message("hello") == HumanMessage("hello")
    assert coerce_messages("hello") == [HumanMessage("hello")]


def test_coerce_messages_shapes() -> None:
    assert coerce_messages(("user", "hi")) == [HumanMessage("hi")]
    assert coerce_messages({"role": "user", "content": "hi"}) == [HumanMessage("hi")]
    assert coerce_messages([("ai", "a"), "b"]) == [AIMessage("a"), HumanMessage("b")]
    assert coerce_messages(m for m in ["x"]) == [HumanMessage("x")]
    with pytest.raises(InvalidMessageError, match="not int"):
        coerce_messages(7)


def test_native_tool_calls_in_a_role_dict() -> None:
    message = coerce_message(
        {
            "role": "assistant",
            "content": "go",
            "tool_calls": [{"id": "c1", "name": "f", "args": {"a": 1}}],
        }
    )
    assert message == AIMessage("go", tool_calls=[ToolCall(id="c1", name="f", args={"a": 1})])


def test_bad_inputs_say_what_to_pass() -> None:
    with pytest.raises(InvalidMessageError, match=r"'role'.*or a 'type'.*got keys \['content'\]"):
        coerce_message({"content": "x"})
    with pytest.raises(InvalidMessageError, match=r"tuple is \(role, content\); got 3 items"):
        coerce_message(("user", "a", "b"))
    with pytest.raises(InvalidMessageError, match="Cannot make a message from int"):
        coerce_message(3)
    with pytest.raises(InvalidMessageError, match="Unknown message role 'wizard'"):
        coerce_message(("wizard", "x"))
    with pytest.raises(InvalidMessageError, match="ToolCall is not a message type"):
        coerce_message(ToolCall(id="c", name="f"))
    with pytest.raises(InvalidMessageError, match="ToolCall is not a message type"):
        coerce_messages(ToolCall(id="c", name="f"))  # one value, not an iterable of fields


def test_a_streamed_chunk_becomes_its_message() -> None:
    # LangGraph's add_messages takes a node's merged AIMessageChunk as the AIMessage it describes
    chunks = [
        AIMessageChunk(content="Let me ", id="r1"),
        AIMessageChunk(
            [TextPart("check."), ToolCallChunk(index=0, id="c1", name="f", args='{"a": 1}')],
            id="r1",
        ),
    ]
    merged = chunks[0] + chunks[1]
    expected = AIMessage(
        "Let me check.", id="r1", tool_calls=[ToolCall(id="c1", name="f", args={"a": 1})]
    )
    assert coerce_message(merged) == expected
    assert coerce_messages(merged) == [expected]
    assert coerce_messages([merged, "next"])[1] == HumanMessage("next")


def test_errors_carry_the_message_id() -> None:
    with pytest.raises(InvalidMessageError) as info:
        coerce_message({"role": "tool", "id": "t7", "content": "x"})
    assert info.value.message_id == "t7"
    assert "tool_call_id: Field required" in str(info.value)


# ------------------------------------------------------- OpenAI transcripts


def test_openai_transcript_coerces() -> None:
    png = base64.b64encode(b"\x89PNG").decode()
    transcript: list[dict[str, Any]] = [
        {"role": "developer", "content": "Be terse."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Weather here?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "Need the tool.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "-3°C"},
        {"role": "assistant", "content": "Cold: -3°C.", "refusal": None},
    ]
    assert coerce_messages(transcript) == [
        SystemMessage("Be terse."),
        HumanMessage([TextPart("Weather here?"), ImagePart(data=png, mime_type="image/png")]),
        AIMessage(
            [
                ReasoningPart("Need the tool."),
                ToolCallPart(id="call_1", name="weather", args={"city": "Oslo"}),
            ]
        ),
        ToolMessage("-3°C", tool_call_id="call_1"),
        AIMessage("Cold: -3°C."),
    ]


def test_openai_shapes_keep_flowgraph_ids() -> None:
    message = coerce_message(
        {
            "role": "assistant",
            "id": "a1",
            "content": "x",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        }
    )
    assert message.id == "a1"
    assert message == AIMessage("x", id="a1", tool_calls=[ToolCall(id="c", name="f")])


def test_tuple_with_openai_parts() -> None:
    message = coerce_message(
        (
            "human",
            [
                {"type": "text", "text": "what is it?"},
                {"type": "image_url", "image_url": {"url": "https://x/c.jpg"}},
            ],
        )
    )
    assert message == HumanMessage([TextPart("what is it?"), ImagePart(url="https://x/c.jpg")])


@pytest.mark.parametrize(
    "value",
    [
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": "a", "reasoning_content": "r"},
        {"role": "assistant", "content": "a", "refusal": None},
        {"role": "assistant", "content": "a", "annotations": []},
        {
            "role": "user",
            "content": [{"type": "input_audio", "input_audio": {"data": "AA==", "format": "wav"}}],
        },
        {"role": "user", "content": [{"type": "file", "file": {"file_id": "file-1"}}]},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ],
)
def test_openai_shaped_dicts_go_through_from_openai(
    value: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = openai_module.from_openai(value)
    seen: list[Any] = []

    def spy(data: Any) -> Any:
        seen.append(data)
        return expected

    monkeypatch.setattr(openai_module, "from_openai", spy)
    assert coerce_message(value) is expected
    assert seen == [value]


@pytest.mark.parametrize(
    "value",
    [
        {"role": "user", "content": "hi"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "a"}, {"type": "image", "url": "https://x"}],
        },
        {
            "role": "user",
            "content": [{"type": "file", "data": "AA==", "mime_type": "application/pdf"}],
        },
        {"role": "assistant", "content": "x", "tool_calls": [{"id": "c", "name": "f", "args": {}}]},
        {"role": "tool", "content": "x", "tool_call_id": "c", "status": "error"},
        {"type": "ai", "content": "x"},
    ],
)
def test_native_dicts_take_the_fast_path(
    value: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(data: Any) -> Any:
        raise AssertionError(f"from_openai called for a native dict: {data}")

    monkeypatch.setattr(openai_module, "from_openai", fail)
    message = coerce_message(value)
    assert message.type in ("human", "ai", "tool")


def test_coercion_never_mutates_the_input() -> None:
    value = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    snapshot = {**value, "tool_calls": [dict(value["tool_calls"][0])]}  # type: ignore[index]  # a list
    coerce_message(value)
    assert value == snapshot
    native = {"role": "user", "content": "x"}
    coerce_message(native)
    assert native == {"role": "user", "content": "x"}
