"""AIMessageChunk: adding chunks, and splitting a reply anywhere then summing it back."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    ImagePart,
    InvalidToolCall,
    ReasoningPart,
    TextPart,
    ToolCallChunk,
    ToolCallPart,
    Usage,
    merge_chunks,
)


def test_chunks_add_text_and_tool_call_fragments_by_index() -> None:
    total = (
        AIMessageChunk("Hel", id="r1")
        + AIMessageChunk(content=[ToolCallChunk(index=0, id="c1", name="f", args='{"a"')])
        + AIMessageChunk("lo")
        + AIMessageChunk(content=[ToolCallChunk(index=0, args=": 1}")])
    )
    assert total.id == "r1"
    assert total.content_blocks == [
        TextPart(text="Hel"),
        ToolCallChunk(index=0, id="c1", name="f", args='{"a": 1}'),
        TextPart(text="lo"),
    ]
    assert total.to_message() == AIMessage(
        content=[
            TextPart(text="Hel"),
            ToolCallPart(id="c1", name="f", args={"a": 1}),
            TextPart(text="lo"),
        ],
        id="r1",
    )


def test_sum_usage_metadata_and_plain_text_content() -> None:
    chunks = [
        AIMessageChunk("a", response_metadata={"model_name": "m"}),
        AIMessageChunk("b", usage=Usage(input_tokens=1, output_tokens=2)),
        AIMessageChunk(response_metadata={"finish_reason": "stop"}, metadata={"k": 1}),
    ]
    message = sum(chunks).to_message()
    assert message.content == "ab"
    assert message.usage == Usage(input_tokens=1, output_tokens=2)
    assert message.response_metadata == {"model_name": "m", "finish_reason": "stop"}
    assert message.metadata == {"k": 1}
    assert merge_chunks(chunks) == chunks[0] + chunks[1] + chunks[2]


def test_arguments_that_do_not_parse_become_invalid_tool_calls() -> None:
    chunk = AIMessageChunk(
        content=[
            ToolCallChunk(index=0, id="a", name="f", args="{oops"),
            ToolCallChunk(index=1, id="b", name="g", args=""),
            ToolCallChunk(index=2, name="h", args="{}"),
        ]
    )
    message = chunk.to_message()
    assert message.tool_calls[0].id == "b" and message.tool_calls[0].args == {}
    invalid = message.invalid_tool_calls
    assert [(c.id, c.name, c.args) for c in invalid] == [("a", "f", "{oops"), (None, "h", "{}")]
    assert "not valid JSON" in invalid[0].error
    assert invalid[1].error == "the tool call has no id"


def test_a_signature_closes_a_reasoning_block() -> None:
    chunks = [
        AIMessageChunk(content=[ReasoningPart(text="one ")]),
        AIMessageChunk(content=[ReasoningPart(text="", signature="s1")]),
        AIMessageChunk(content=[ReasoningPart(text="two")]),
        AIMessageChunk(content=[ReasoningPart(text="", signature="s2")]),
    ]
    assert merge_chunks(chunks).content_blocks == [
        ReasoningPart(text="one ", signature="s1"),
        ReasoningPart(text="two", signature="s2"),
    ]


def test_from_message_round_trips_invalid_calls_too() -> None:
    message = AIMessage(
        content=[ReasoningPart(text="r"), TextPart(text="t")],
        tool_calls=[{"id": "c", "name": "f", "args": {"x": "é"}}],
        invalid_tool_calls=[InvalidToolCall(id="d", name="g", args="{", error="bad")],
        id="m",
    )
    back = AIMessageChunk.from_message(message).to_message()
    assert back.content_blocks == message.content_blocks
    assert back.invalid_tool_calls[0].args == "{"


# ------------------------------------------------------------ the property


texts = st.text(min_size=1, max_size=30)
args = st.dictionaries(
    st.text(min_size=1, max_size=5),
    st.one_of(st.integers(), st.text(max_size=10), st.booleans(), st.none()),
    max_size=4,
)


@st.composite
def replies(draw: st.DrawFn) -> AIMessage:
    """Replies in the normal form a provider produces: no two text parts side by side."""
    parts: list[Any] = []
    calls = 0
    for kind in draw(st.lists(st.sampled_from(["text", "reasoning", "tool", "image"]), max_size=6)):
        previous = parts[-1] if parts else None
        if kind == "text" and not isinstance(previous, TextPart):
            parts.append(TextPart(text=draw(texts)))
        elif kind == "reasoning" and not (
            isinstance(previous, ReasoningPart) and previous.signature is None
        ):
            signature = draw(st.one_of(st.none(), st.text(min_size=1, max_size=8)))
            parts.append(ReasoningPart(text=draw(texts), signature=signature))
        elif kind == "tool":
            parts.append(ToolCallPart(id=f"call_{calls}", name="tool", args=draw(args)))
            calls += 1
        elif kind == "image":
            parts.append(ImagePart(url="https://example.com/a.png"))
    usage = draw(st.one_of(st.none(), st.builds(Usage, input_tokens=st.integers(0, 99))))
    content: Any = parts
    if all(isinstance(p, TextPart) for p in parts):
        content = "".join(p.text for p in parts)
    return AIMessage(
        content=content, id="r", usage=usage, response_metadata={"finish_reason": "stop"}
    )


def _fragments(chunk: AIMessageChunk, cuts: list[int]) -> list[AIMessageChunk]:
    """The chunk cut into pieces: text, reasoning and arguments split at the given points."""
    pieces: list[AIMessageChunk] = []
    cut = itertools.cycle(cuts)
    for part in chunk.content_blocks:
        if isinstance(part, (TextPart, ReasoningPart)):
            text, start = part.text, 0
            while start < len(text):
                end = min(len(text), start + 1 + next(cut) % 7)
                last = end == len(text)
                if isinstance(part, TextPart):
                    piece: Any = TextPart(text=text[start:end])
                else:
                    piece = ReasoningPart(
                        text=text[start:end], signature=part.signature if last else None
                    )
                pieces.append(AIMessageChunk(content=[piece], id=chunk.id))
                start = end
        elif isinstance(part, ToolCallChunk):
            text, start, first = part.args, 0, True
            while first or start < len(text):
                end = min(len(text), start + 1 + next(cut) % 7)
                head = {"id": part.id, "name": part.name} if first else {}
                fragment = ToolCallChunk(index=part.index, args=text[start:end], **head)
                pieces.append(AIMessageChunk(content=[fragment], id=chunk.id))
                start, first = end, False
        else:
            pieces.append(AIMessageChunk(content=[part], id=chunk.id))
    pieces.append(
        AIMessageChunk(id=chunk.id, usage=chunk.usage, response_metadata=chunk.response_metadata)
    )
    return pieces


@settings(deadline=None)
@given(replies(), st.lists(st.integers(0, 100), min_size=1, max_size=20))
def test_splitting_a_reply_anywhere_and_summing_gives_the_same_message(
    reply: AIMessage, cuts: list[int]
) -> None:
    pieces = _fragments(AIMessageChunk.from_message(reply), cuts)
    assert merge_chunks(pieces).to_message() == reply
    assert sum(pieces).to_message() == reply  # sum starts from 0


@settings(deadline=None, max_examples=50)
@given(replies(), st.integers(1, 5))
def test_adding_is_associative(reply: AIMessage, stride: int) -> None:
    pieces = _fragments(AIMessageChunk.from_message(reply), [stride])
    middle = len(pieces) // 2
    left = merge_chunks(pieces[:middle]) + merge_chunks(pieces[middle:])
    assert left.to_message() == merge_chunks(pieces).to_message()


def test_tool_call_arguments_keep_json_that_needs_escaping() -> None:
    args = {"q": 'say "hi"\n', "ü": [1, None]}
    reply = AIMessage("", tool_calls=[{"id": "c", "name": "f", "args": args}])
    pieces = _fragments(AIMessageChunk.from_message(reply), [0])
    assert len(pieces) > len(json.dumps(args)) // 7
    assert merge_chunks(pieces).to_message().tool_calls[0].args == args
