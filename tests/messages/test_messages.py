"""The message model of DESIGN §1: classes, aliases, fields, views, validation, dicts."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from flowgraph.errors import InvalidMessageError
from flowgraph.messages import (
    REMOVE_ALL_MESSAGES,
    AIMessage,
    AnyMessage,
    AssistantMessage,
    AudioPart,
    BaseMessage,
    FilePart,
    HumanMessage,
    ImagePart,
    InvalidToolCall,
    ReasoningPart,
    RemoveMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolMessage,
    ToolResponseMessage,
    Usage,
    UserMessage,
    VideoPart,
    coerce_message,
    messages_from_dicts,
    messages_to_dicts,
)
from flowgraph.messages._messages import message_adapter

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

# ------------------------------------------------------------ classes and fields


def test_aliases_are_the_same_classes() -> None:
    assert UserMessage is HumanMessage
    assert AssistantMessage is AIMessage
    assert ToolResponseMessage is ToolMessage


@pytest.mark.parametrize(
    ("cls", "type_"),
    [
        (SystemMessage, "system"),
        (HumanMessage, "human"),
        (AIMessage, "ai"),
        (ToolMessage, "tool"),
        (RemoveMessage, "remove"),
    ],
)
def test_type_discriminator(cls: type[Any], type_: str) -> None:
    assert cls.model_fields["type"].default == type_
    extra = {"tool_call_id": "c1"} if cls is ToolMessage else {}
    message = cls(id="m1", **extra)
    assert message.type == type_
    assert type(message_adapter.validate_python(message.model_dump())) is cls


def test_common_fields_and_defaults() -> None:
    for cls in (SystemMessage, HumanMessage, AIMessage):
        message = cls()
        assert message.content == ""
        assert message.id is None
        assert message.name is None
        assert message.metadata == {}
        assert message.text == ""
    assert set(BaseMessage.model_fields) == {"type", "content", "id", "name", "metadata"}


def test_ai_message_extra_fields() -> None:
    assert set(AIMessage.model_fields) - set(BaseMessage.model_fields) == {
        "invalid_tool_calls",
        "usage",
        "response_metadata",
    }
    message = AIMessage("hi")
    assert message.tool_calls == []
    assert message.invalid_tool_calls == []
    assert message.usage is None
    assert message.response_metadata == {}
    assert message.reasoning == ""
    assert message.has_tool_calls is False


def test_tool_message_extra_fields() -> None:
    assert set(ToolMessage.model_fields) - set(BaseMessage.model_fields) == {
        "tool_call_id",
        "status",
        "artifact",
    }
    message = ToolMessage("42", tool_call_id="c1")
    assert (message.tool_call_id, message.status, message.artifact) == ("c1", "success", None)
    failed = ToolMessage("boom", tool_call_id="c2", status="error", artifact={"rows": [1, 2]})
    assert failed.status == "error"
    assert failed.artifact == {"rows": [1, 2]}


def test_remove_message_has_only_an_id() -> None:
    assert set(RemoveMessage.model_fields) == {"type", "id"}
    assert RemoveMessage("m1").id == "m1"
    assert RemoveMessage(id="m1") == RemoveMessage("m1")
    assert RemoveMessage(REMOVE_ALL_MESSAGES).id == REMOVE_ALL_MESSAGES
    with pytest.raises(ValidationError, match="id"):
        RemoveMessage()
    with pytest.raises(ValidationError, match="content"):
        RemoveMessage("m1", content="x")


def test_positional_content_and_keywords() -> None:
    message = HumanMessage("hi", name="User_A", id="h1", metadata={"lang": "en"})
    assert message.content == "hi"
    assert message.name == "User_A"
    assert message.id == "h1"
    assert message.metadata == {"lang": "en"}
    assert HumanMessage(content="hi") == HumanMessage("hi")
    assert SystemMessage("be brief").content == "be brief"


def test_content_list_accepts_bare_strings_as_text_parts() -> None:
    message = HumanMessage(["a", ImagePart(url="https://x/i.png"), "b"])
    assert message.content == [
        TextPart("a"),
        ImagePart(url="https://x/i.png"),
        TextPart("b"),
    ]
    assert message.text == "ab"


def test_usage_fills_total_and_adds() -> None:
    usage = Usage(input_tokens=10, output_tokens=5)
    assert usage.total_tokens == 15
    assert Usage(input_tokens=1, output_tokens=1, total_tokens=7).total_tokens == 7
    total = usage + Usage(input_tokens=1, output_tokens=2, cached_tokens=3)
    assert total == Usage(input_tokens=11, output_tokens=7, total_tokens=18, cached_tokens=3)
    assert total.reasoning_tokens is None


def test_tool_call_and_invalid_tool_call_fields() -> None:
    call = ToolCall(id="c1", name="get_weather", args={"city": "Paris"})
    assert (call.id, call.name, call.args) == ("c1", "get_weather", {"city": "Paris"})
    assert ToolCall(id="c", name="n").args == {}
    bad = InvalidToolCall(id="c2", name="f", args="{oops", error="not JSON")
    assert (bad.id, bad.name, bad.args, bad.error) == ("c2", "f", "{oops", "not JSON")
    assert ToolCallPart(id="c", name="n", args={"a": 1}).type == "tool_call"


# --------------------------------------------------------------------- views


def test_views_follow_part_order() -> None:
    image = ImagePart(url="https://x/1.png")
    audio = AudioPart(data=b"RIFF", mime_type="audio/wav")
    message = AIMessage(
        [
            ReasoningPart("think "),
            ToolCallPart(id="c1", name="a", args={"x": 1}),
            TextPart("Hello"),
            image,
            ReasoningPart("more"),
            ToolCallPart(id="c2", name="b"),
            TextPart(", world"),
            audio,
        ]
    )
    assert message.text == "Hello, world"
    assert message.reasoning == "think more"
    assert message.tool_calls == [
        ToolCall(id="c1", name="a", args={"x": 1}),
        ToolCall(id="c2", name="b", args={}),
    ]
    assert all(type(c) is ToolCall for c in message.tool_calls)
    assert message.media == [image, audio]
    assert message.has_tool_calls is True


def test_string_content_views() -> None:
    message = AIMessage("plain")
    assert (message.text, message.reasoning, message.tool_calls, message.media) == (
        "plain",
        "",
        [],
        [],
    )
    human = HumanMessage([TextPart("a"), ReasoningPart("not text"), TextPart("b")])
    assert human.text == "ab"


def test_ai_message_builds_text_then_tool_calls() -> None:
    message = AIMessage(
        "Let me check.",
        tool_calls=[
            {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}},
            ToolCall(id="c2", name="get_time", args={"tz": "CET"}),
        ],
    )
    assert message.content == "Let me check."  # LangChain's reading: the text
    assert message.content_blocks == [
        TextPart("Let me check."),
        ToolCallPart(id="c1", name="get_weather", args={"city": "Paris"}),
        ToolCallPart(id="c2", name="get_time", args={"tz": "CET"}),
    ]
    assert [c.id for c in message.tool_calls] == ["c1", "c2"]
    assert message.text == "Let me check."


def test_ai_message_with_empty_text_and_tool_calls_has_only_calls() -> None:
    message = AIMessage(tool_calls=[ToolCall(id="c1", name="f")])
    assert message.content == ""  # as LangChain's AIMessage("", tool_calls=[...])
    assert message.content_blocks == [ToolCallPart(id="c1", name="f")]
    assert message.text == ""
    assert AIMessage("x", tool_calls=[]).content == "x"


def test_ai_message_tool_calls_after_existing_parts_without_duplicates() -> None:
    message = AIMessage(
        [ReasoningPart("r"), ToolCallPart(id="c1", name="f")],
        tool_calls=[ToolCall(id="c1", name="f"), ToolCall(id="c2", name="g")],
    )
    assert message.content_blocks == [
        ReasoningPart("r"),
        ToolCallPart(id="c1", name="f"),
        ToolCallPart(id="c2", name="g"),
    ]
    assert message.content == message.content_blocks  # reasoning: the list, as built


def test_tool_calls_must_be_a_list() -> None:
    with pytest.raises(ValidationError, match="tool_calls must be a list"):
        AIMessage("x", tool_calls="f()")


# ------------------------------------------------------------------ media


def test_image_bytes_are_stored_as_base64_text() -> None:
    image = ImagePart(data=PNG, mime_type="image/png", detail="high")
    assert image.data == base64.b64encode(PNG).decode("ascii")
    assert isinstance(image.data, str)
    assert image.as_bytes() == PNG
    assert ImagePart(data=image.data, mime_type="image/png", detail="high") == image
    assert ImagePart(data=bytearray(PNG), mime_type="image/png").data == image.data
    assert ImagePart(data=memoryview(PNG), mime_type="image/png").data == image.data


def test_image_data_that_is_not_base64_names_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        ImagePart(data="this is not base64!", mime_type="image/png")
    assert info.value.errors()[0]["loc"] == ("data",)
    assert "base64" in str(info.value)
    assert "url=" in str(info.value)  # says what to do instead


@pytest.mark.parametrize("cls", [ImagePart, AudioPart, VideoPart, FilePart])
def test_media_needs_exactly_one_of_url_or_data(cls: type[Any]) -> None:
    assert cls(url="https://x/y").url == "https://x/y"
    assert cls(data=b"abc", mime_type="x/y").as_bytes() == b"abc"
    with pytest.raises(ValidationError, match="exactly one of url= or data=, got neither"):
        cls()
    with pytest.raises(ValidationError, match="exactly one of url= or data=, got both"):
        cls(url="https://x/y", data=b"abc")
    with pytest.raises(ValueError, match="holds no data"):
        cls(url="https://x/y").as_bytes()


def test_file_part_fields() -> None:
    pdf = FilePart(data=b"%PDF-1.7", mime_type="application/pdf", filename="report.pdf")
    assert (pdf.type, pdf.mime_type, pdf.filename) == ("file", "application/pdf", "report.pdf")
    assert pdf.as_bytes() == b"%PDF-1.7"


def test_image_detail_is_checked() -> None:
    with pytest.raises(ValidationError, match="detail"):
        ImagePart(url="https://x", detail="ultra")


def test_parts_reject_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="colour"):
        TextPart("x", colour="red")


# ----------------------------------------------------------------- frozen


def test_messages_and_parts_are_frozen() -> None:
    message = AIMessage("hi", id="a1", tool_calls=[ToolCall(id="c1", name="f")])
    with pytest.raises(ValidationError, match="frozen"):
        message.content = "changed"  # type: ignore[misc]  # the point of the test
    with pytest.raises(ValidationError, match="frozen"):
        message.id = "other"  # type: ignore[misc]  # the point of the test
    part = message.content_blocks[0]
    assert isinstance(part, TextPart)
    with pytest.raises(ValidationError, match="frozen"):
        part.text = "changed"  # type: ignore[misc]  # the point of the test
    with pytest.raises(ValidationError, match="frozen"):
        RemoveMessage("x").id = "y"  # type: ignore[misc]  # the point of the test
    assert message.text == "hi"
    assert message.model_copy(update={"id": "a2"}).id == "a2"
    assert message.id == "a1"


def test_messages_are_hashable_values_with_equality() -> None:
    assert HumanMessage("hi", id="1") == HumanMessage("hi", id="1")
    assert HumanMessage("hi", id="1") != HumanMessage("hi", id="2")
    assert HumanMessage("hi") != SystemMessage("hi")


# -------------------------------------------------------------- bad input


def test_tool_message_without_tool_call_id_names_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        ToolMessage("result")
    assert info.value.errors()[0]["loc"] == ("tool_call_id",)
    with pytest.raises(InvalidMessageError, match="tool_call_id: Field required"):
        coerce_message({"role": "tool", "content": "result"})


def test_wrong_content_type_names_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        HumanMessage(42)
    assert {e["loc"][0] for e in info.value.errors()} == {"content"}
    with pytest.raises(InvalidMessageError, match=r"^Invalid human message: content: "):
        coerce_message({"role": "user", "content": 42})
    with pytest.raises(InvalidMessageError, match=r"content\.0\.image: .*exactly one of"):
        coerce_message({"role": "user", "content": [{"type": "image"}]})


def test_unknown_part_type_is_rejected() -> None:
    with pytest.raises(ValidationError, match="hologram"):
        HumanMessage([{"type": "hologram"}])
    with pytest.raises(ValidationError, match="tool_call"):
        HumanMessage([ToolCallPart(id="c", name="f")])  # only AI messages hold tool calls


def test_unknown_role_names_role_and_accepted_ones() -> None:
    with pytest.raises(InvalidMessageError) as info:
        coerce_message({"role": "robot", "content": "beep"})
    text = str(info.value)
    assert "'robot'" in text
    for role in ("user", "human", "assistant", "ai", "system", "developer", "tool"):
        assert role in text


def test_extra_fields_are_rejected() -> None:
    with pytest.raises(ValidationError, match="colour"):
        HumanMessage("x", colour="red")
    with pytest.raises(InvalidMessageError, match="colour"):
        coerce_message({"role": "user", "content": "x", "colour": "red"})


# ----------------------------------------------------------- dict round trips

INTERLEAVED = AIMessage(
    [
        ReasoningPart("First I look up the weather.", signature="sig-1"),
        ToolCallPart(id="c1", name="get_weather", args={"city": "Paris"}),
        TextPart("It is sunny. "),
        ImagePart(data=PNG, mime_type="image/png"),
        ReasoningPart("Now the time."),
        ToolCallPart(
            id="c2", name="get_time", args={"tz": "Europe/Paris", "nested": [1, {"a": None}]}
        ),
        TextPart("Checking the time too."),
        FilePart(url="https://x/report.pdf", filename="report.pdf"),
    ],
    id="ai-1",
    name="planner",
    metadata={"k": [1, 2]},
    invalid_tool_calls=[InvalidToolCall(id="c3", name="f", args="{", error="bad")],
    usage=Usage(input_tokens=3, output_tokens=4, reasoning_tokens=2),
    response_metadata={"finish_reason": "tool_calls", "model_name": "m"},
)


def test_interleaved_parts_keep_order_through_model_dump() -> None:
    dumped = INTERLEAVED.model_dump()
    assert [p["type"] for p in dumped["content"]] == [
        "reasoning",
        "tool_call",
        "text",
        "image",
        "reasoning",
        "tool_call",
        "text",
        "file",
    ]
    restored = AIMessage.model_validate(dumped)
    assert restored == INTERLEAVED
    assert restored.content == INTERLEAVED.content
    assert message_adapter.validate_python(dumped) == INTERLEAVED
    # and through JSON text, as a checkpoint viewer would see it
    assert AIMessage.model_validate_json(INTERLEAVED.model_dump_json()) == INTERLEAVED


def test_messages_to_dicts_and_back_is_lossless() -> None:
    messages: list[Any] = [
        SystemMessage("rules", id="s", name="sys"),
        HumanMessage(["look", ImagePart(url="https://x/i.png", detail="low")], id="h", name="A"),
        INTERLEAVED,
        ToolMessage("sunny", tool_call_id="c1", id="t", status="error", artifact={"raw": [1]}),
        RemoveMessage("h"),
    ]
    dicts = messages_to_dicts(messages)
    assert all(type(d) is dict for d in dicts)
    assert [d["type"] for d in dicts] == ["system", "human", "ai", "tool", "remove"]
    json.dumps(dicts)  # plain data only
    restored = messages_from_dicts(dicts)
    assert restored == messages
    assert [type(m) for m in restored] == [type(m) for m in messages]


def test_messages_from_dicts_reports_the_bad_item() -> None:
    with pytest.raises(InvalidMessageError, match="tool_call_id"):
        messages_from_dicts([{"type": "human", "content": "ok"}, {"type": "tool", "content": "x"}])


def test_messages_from_dicts_accepts_role_dicts() -> None:
    restored = messages_from_dicts(
        [{"role": "user", "content": "hi"}, {"type": "ai", "content": "yo"}]
    )
    assert restored == [HumanMessage("hi"), AIMessage("yo")]


# ---------------------------------------------------------------- properties

_text = st.text(max_size=20)
_ids = st.text(alphabet="abcdef0123456789-", min_size=1, max_size=8)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_media = st.one_of(
    st.builds(ImagePart, url=st.just("https://x/i.png"), detail=st.sampled_from([None, "low"])),
    st.builds(ImagePart, data=st.binary(max_size=16), mime_type=st.just("image/png")),
    st.builds(AudioPart, data=st.binary(max_size=16), mime_type=st.just("audio/wav")),
    st.builds(VideoPart, url=st.just("https://x/v.mp4")),
    st.builds(
        FilePart,
        data=st.binary(max_size=16),
        mime_type=st.just("application/pdf"),
        filename=st.none() | st.just("a.pdf"),
    ),
)
_part = st.one_of(st.builds(TextPart, text=_text), st.builds(ReasoningPart, text=_text), _media)
_ai_part = _part | st.builds(
    ToolCallPart, id=_ids, name=_ids, args=st.dictionaries(_text, _json, max_size=3)
)


def _content(part: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return _text | st.lists(part, max_size=6)


_common: dict[str, Any] = {
    "id": st.none() | _ids,
    "name": st.none() | _text,
    "metadata": st.dictionaries(_text, _json, max_size=2),
}
any_message: st.SearchStrategy[Any] = st.one_of(
    st.builds(SystemMessage, content=_content(_part), **_common),
    st.builds(HumanMessage, content=_content(_part), **_common),
    st.builds(
        AIMessage,
        content=_content(_ai_part),
        usage=st.none()
        | st.builds(Usage, input_tokens=st.integers(0, 99), output_tokens=st.integers(0, 99)),
        response_metadata=st.dictionaries(_text, _json, max_size=2),
        invalid_tool_calls=st.lists(
            st.builds(InvalidToolCall, id=_ids, name=_ids, args=_text, error=_text), max_size=2
        ),
        **_common,
    ),
    st.builds(
        ToolMessage,
        content=_content(_part),
        tool_call_id=_ids,
        status=st.sampled_from(["success", "error"]),
        artifact=_json,
        **_common,
    ),
    st.builds(RemoveMessage, id=_ids),
)


@given(st.lists(any_message, max_size=5))
def test_any_messages_round_trip_through_dicts(messages: list[AnyMessage]) -> None:
    restored = messages_from_dicts(messages_to_dicts(messages))
    assert restored == messages
    for before, after in zip(messages, restored, strict=True):
        assert type(after) is type(before)
        if isinstance(before, AIMessage):
            assert isinstance(after, AIMessage)
            assert after.tool_calls == before.tool_calls
            assert after.reasoning == before.reasoning
        if isinstance(before, BaseMessage):
            assert isinstance(after, BaseMessage)
            assert after.text == before.text
            assert after.media == before.media
