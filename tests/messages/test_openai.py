"""to_openai / from_openai: the Chat Completions wire format, both directions."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowgraph.errors import InvalidMessageError
from flowgraph.messages import (
    OPENAI_FILE_URL_PREFIX,
    AIMessage,
    AudioPart,
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
    Usage,
    VideoPart,
    from_openai,
    to_openai,
)

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"
WAV = b"RIFF$\x00\x00\x00WAVEfmt "
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# ------------------------------------------------------------------ shapes


def test_one_in_one_out_list_in_list_out() -> None:
    message = HumanMessage("hi")
    assert to_openai(message) == {"role": "user", "content": "hi"}
    assert to_openai([message, SystemMessage("s")]) == [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "s"},
    ]
    assert to_openai((message,)) == [{"role": "user", "content": "hi"}]
    assert to_openai([]) == []
    assert from_openai({"role": "user", "content": "hi"}) == message
    assert from_openai([{"role": "user", "content": "hi"}]) == [message]
    assert from_openai([]) == []


def test_to_openai_accepts_message_likes() -> None:
    assert to_openai([("user", "hi"), {"role": "assistant", "content": "yo"}, "bare"]) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
        {"role": "user", "content": "bare"},
    ]


def test_roles() -> None:
    assert to_openai(SystemMessage("s"))["role"] == "system"
    assert to_openai(HumanMessage("h"))["role"] == "user"
    assert to_openai(AIMessage("a"))["role"] == "assistant"
    assert to_openai(ToolMessage("t", tool_call_id="c"))["role"] == "tool"


@pytest.mark.parametrize(
    ("role", "cls"),
    [
        ("system", SystemMessage),
        ("developer", SystemMessage),
        ("user", HumanMessage),
        ("human", HumanMessage),
        ("assistant", AIMessage),
        ("ai", AIMessage),
    ],
)
def test_input_role_names(role: str, cls: type[Any]) -> None:
    message = from_openai({"role": role, "content": "x"})
    assert type(message) is cls
    assert message.content == "x"


def test_unknown_role_names_it_and_the_accepted_ones() -> None:
    with pytest.raises(InvalidMessageError) as info:
        from_openai({"role": "function", "content": "x", "name": "f"})
    assert "'function'" in str(info.value)
    assert "user/human, assistant/ai, system/developer, tool" in str(info.value)
    with pytest.raises(InvalidMessageError, match=r"messages\[1\]: Unknown message role 'bot'"):
        from_openai([{"role": "user", "content": "a"}, {"role": "bot", "content": "b"}])


def test_missing_role_and_wrong_types() -> None:
    with pytest.raises(InvalidMessageError, match=r"needs a 'role'.*messages_from_dicts"):
        from_openai({"type": "human", "content": "x"})
    with pytest.raises(InvalidMessageError, match="not str"):
        from_openai("hello")  # type: ignore[call-overload]  # the point of the test
    with pytest.raises(InvalidMessageError, match=r"messages\[0\].*not str"):
        from_openai(["hello"])  # type: ignore[list-item]  # the point of the test
    with pytest.raises(InvalidMessageError, match="remove"):
        from_openai({"role": "remove", "id": "x"})


def test_name_passes_through_both_ways() -> None:
    for message in (
        SystemMessage("s", name="policy"),
        HumanMessage("h", name="User_A"),
        AIMessage("a", name="Planner"),
        ToolMessage("t", tool_call_id="c1", name="get_weather"),
    ):
        out = to_openai(message)
        assert out["name"] == message.name
        assert from_openai(out) == message
    assert "name" not in to_openai(HumanMessage("h"))


# ------------------------------------------------------------------- tools


def test_assistant_tool_calls_as_functions_with_json_arguments() -> None:
    message = AIMessage(
        "Checking.",
        tool_calls=[
            ToolCall(id="call_1", name="get_weather", args={"city": "Zürich", "days": 2}),
            ToolCall(id="call_2", name="now", args={}),
        ],
    )
    out = to_openai(message)
    assert out == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Zürich","days":2}'},
            },
            {"id": "call_2", "type": "function", "function": {"name": "now", "arguments": "{}"}},
        ],
    }
    assert json.loads(out["tool_calls"][0]["function"]["arguments"]) == {
        "city": "Zürich",
        "days": 2,
    }
    assert from_openai(out) == message


def test_tool_calls_without_text_send_null_content() -> None:
    message = AIMessage(tool_calls=[ToolCall(id="c1", name="f", args={"a": [1, None]})])
    out = to_openai(message)
    assert out["content"] is None
    assert from_openai(out) == message
    back = from_openai(out)
    assert isinstance(back, AIMessage)
    assert back.content_blocks == [ToolCallPart(id="c1", name="f", args={"a": [1, None]})]


def test_unparseable_arguments_become_invalid_tool_calls() -> None:
    message = from_openai(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "ok", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}},
                {"id": "bad", "type": "function", "function": {"name": "g", "arguments": '{"x":'}},
                {"id": "arr", "type": "function", "function": {"name": "h", "arguments": "[1]"}},
            ],
        }
    )
    assert isinstance(message, AIMessage)
    assert message.tool_calls == [ToolCall(id="ok", name="f", args={"x": 1})]
    bad, arr = message.invalid_tool_calls
    assert (bad.id, bad.name, bad.args) == ("bad", "g", '{"x":')
    assert bad.error.startswith("arguments are not valid JSON: Expecting value")
    assert (arr.id, arr.name, arr.args) == ("arr", "h", "[1]")
    assert arr.error == "arguments must be a JSON object, got list"
    # sent back, invalid calls keep their raw arguments so the answering ToolMessage matches
    out = to_openai(message)
    assert [c["id"] for c in out["tool_calls"]] == ["ok", "bad", "arr"]
    assert out["tool_calls"][1]["function"]["arguments"] == '{"x":'
    assert from_openai(out) == message


def test_empty_or_object_arguments_are_accepted() -> None:
    message = from_openai(
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": ""}},
                {"id": "b", "type": "function", "function": {"name": "g", "arguments": {"k": 1}}},
            ],
        }
    )
    assert isinstance(message, AIMessage)
    assert message.tool_calls == [
        ToolCall(id="a", name="f"),
        ToolCall(id="b", name="g", args={"k": 1}),
    ]
    assert message.invalid_tool_calls == []


def test_a_call_without_id_or_name_is_invalid() -> None:
    message = from_openai(
        {
            "role": "assistant",
            "tool_calls": [
                {"type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "x", "type": "function", "function": {"arguments": "{}"}},
            ],
        }
    )
    assert isinstance(message, AIMessage)
    assert message.tool_calls == []
    assert [(c.id, c.name, c.error) for c in message.invalid_tool_calls] == [
        (None, "f", "the tool call has no id"),
        ("x", None, "the tool call names no function"),
    ]
    assert "tool_calls" not in to_openai(message)  # no id or name: nothing OpenAI can take


def test_a_call_with_an_empty_id_is_invalid() -> None:
    """An empty id cannot be answered (a ToolMessage needs the call's id), so the call
    is invalid, whatever else it gets right."""
    message = from_openai(
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}},
                {"id": "c2", "type": "function", "function": {"name": "", "arguments": "{}"}},
            ],
        }
    )
    assert isinstance(message, AIMessage)
    assert message.tool_calls == []
    assert message.invalid_tool_calls == [
        InvalidToolCall(id="", name="f", args='{"a":1}', error="the tool call has no id"),
        InvalidToolCall(id="c2", name="", args="{}", error="the tool call names no function"),
    ]


@pytest.mark.parametrize(
    ("arguments", "raw", "error"),
    [
        (5, "5", "arguments must be a JSON string, got int"),
        (2.5, "2.5", "arguments must be a JSON string, got float"),
        (True, "true", "arguments must be a JSON string, got bool"),
        ([1, "x"], '[1, "x"]', "arguments must be a JSON string, got list"),
        (b'{"a": 1}', "b'{\"a\": 1}'", "arguments must be a JSON string, got bytes"),
        (
            {1: "one"},
            '{"1": "one"}',
            "arguments must be a JSON object, got a mapping with keys that are not strings",
        ),
    ],
    ids=["int", "float", "bool", "list", "bytes", "int-keys"],
)
def test_arguments_that_are_not_a_json_string_become_an_invalid_call_the_model_can_read(
    arguments: Any, raw: str, error: str
) -> None:
    """Never a validation error for the whole reply: the call is kept as an invalid one
    with its arguments as text, which goes back to the model with the error."""
    message = from_openai(
        {
            "role": "assistant",
            "content": "calling",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}},
                {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}},
            ],
        }
    )
    assert isinstance(message, AIMessage)
    assert message.text == "calling"
    assert message.tool_calls == [ToolCall(id="c2", name="g")]
    assert message.invalid_tool_calls == [InvalidToolCall(id="c1", name="f", args=raw, error=error)]
    out = to_openai(message)
    assert [(c["id"], c["function"]["arguments"]) for c in out["tool_calls"]] == [
        ("c2", "{}"),
        ("c1", raw),
    ]


def test_malformed_tool_calls_list() -> None:
    with pytest.raises(InvalidMessageError, match=r"tool_calls\[0\] must be a dict"):
        from_openai({"role": "assistant", "tool_calls": ["f()"]})
    with pytest.raises(InvalidMessageError, match="tool_calls must be a list"):
        from_openai({"role": "assistant", "tool_calls": {"id": "x"}})


def test_tool_message() -> None:
    message = ToolMessage("22°C", tool_call_id="call_1")
    assert to_openai(message) == {"role": "tool", "content": "22°C", "tool_call_id": "call_1"}
    assert from_openai(to_openai(message)) == message
    with pytest.raises(InvalidMessageError, match="tool_call_id: Field required"):
        from_openai({"role": "tool", "content": "x"})


def test_non_json_arguments_fail_naming_the_call() -> None:
    message = AIMessage(tool_calls=[ToolCall(id="c9", name="f", args={"when": object()})])
    with pytest.raises(InvalidMessageError, match=r"'c9'.*not JSON"):
        to_openai(message)


# --------------------------------------------------------------- reasoning


def test_reasoning_content_both_ways() -> None:
    wire = {
        "role": "assistant",
        "content": "42",
        "reasoning_content": "6 times 7.",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "check", "arguments": "{}"}}
        ],
    }
    message = from_openai(wire)
    assert isinstance(message, AIMessage)
    assert message.content == [
        ReasoningPart("6 times 7."),
        TextPart("42"),
        ToolCallPart(id="c", name="check"),
    ]
    assert message.reasoning == "6 times 7."
    assert message.text == "42"
    assert to_openai(message) == wire
    without = to_openai(message, include_reasoning=False)
    assert "reasoning_content" not in without
    assert from_openai({"role": "assistant", "content": "a", "reasoning": "r"}) == AIMessage(
        [ReasoningPart("r"), TextPart("a")]
    )


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize(
    "wire",
    [
        {"role": "assistant", "content": "42"},
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
        {
            "role": "assistant",
            "content": "x",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ],
    ids=["text", "null", "empty", "parts", "tool-call"],
)
def test_empty_reasoning_adds_no_part_and_leaves_content_as_it_was(
    key: str, wire: dict[str, Any]
) -> None:
    message = from_openai({**wire, key: ""})
    assert isinstance(message, AIMessage)
    assert message == from_openai(wire)
    assert not any(isinstance(p, ReasoningPart) for p in message.content)
    if isinstance(wire["content"], str) and "tool_calls" not in wire:
        assert message.content == wire["content"]  # still a plain string


def test_interleaved_parts_are_regrouped_reasoning_text_calls() -> None:
    message = AIMessage(
        [
            ReasoningPart("a"),
            ToolCallPart(id="c1", name="f"),
            TextPart("x"),
            ReasoningPart("b", signature="sig"),
            ToolCallPart(id="c2", name="g"),
            TextPart("y"),
        ]
    )
    out = to_openai(message)
    assert out == {
        "role": "assistant",
        "content": "xy",
        "reasoning_content": "ab",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}},
        ],
    }
    back = from_openai(out)
    assert isinstance(back, AIMessage)
    # the views survive; the interleaving and the signature do not
    assert (back.text, back.reasoning, back.tool_calls) == (
        message.text,
        message.reasoning,
        message.tool_calls,
    )
    assert back.content == [
        ReasoningPart("ab"),
        TextPart("xy"),
        ToolCallPart(id="c1", name="f"),
        ToolCallPart(id="c2", name="g"),
    ]


def test_order_reasoning_text_calls_round_trips_exactly() -> None:
    message = AIMessage(
        [
            ReasoningPart("plan"),
            TextPart("On it."),
            ToolCallPart(id="c1", name="f", args={"q": "x"}),
            ToolCallPart(id="c2", name="g"),
        ]
    )
    assert from_openai(to_openai(message)) == message


def test_reasoning_in_user_content_is_dropped() -> None:
    message = HumanMessage([TextPart("a"), ReasoningPart("hidden")])
    assert to_openai(message) == {"role": "user", "content": [{"type": "text", "text": "a"}]}


def test_refusal_is_kept_in_response_metadata() -> None:
    message = from_openai({"role": "assistant", "content": None, "refusal": "I can't help."})
    assert isinstance(message, AIMessage)
    assert message.content == ""
    assert message.response_metadata == {"refusal": "I can't help."}
    parts = from_openai({"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]})
    assert isinstance(parts, AIMessage)
    assert parts.content == []
    assert parts.response_metadata["refusal"] == "No."


def test_openai_response_message_as_the_sdk_dumps_it() -> None:
    # ChatCompletionMessage.model_dump() of the official SDK, with its null fields
    wire = {
        "content": None,
        "refusal": None,
        "role": "assistant",
        "annotations": [],
        "audio": None,
        "function_call": None,
        "tool_calls": [
            {
                "id": "call_abc",
                "function": {"arguments": '{"city":"Paris"}', "name": "get_weather"},
                "type": "function",
            }
        ],
    }
    message = from_openai(wire)
    assert message == AIMessage(
        tool_calls=[ToolCall(id="call_abc", name="get_weather", args={"city": "Paris"})]
    )
    assert message.response_metadata == {}  # type: ignore[union-attr]  # an AIMessage, asserted above


# --------------------------------------------------------------- dropped


def test_what_to_openai_drops() -> None:
    tool = ToolMessage(
        "failed: timeout",
        tool_call_id="c1",
        id="t1",
        status="error",
        artifact={"trace": "..."},
        metadata={"ms": 30000},
    )
    assert to_openai(tool) == {"role": "tool", "content": "failed: timeout", "tool_call_id": "c1"}
    ai = AIMessage(
        "hi",
        id="a1",
        usage=Usage(input_tokens=1, output_tokens=2),
        response_metadata={"finish_reason": "stop"},
        metadata={"x": 1},
    )
    assert to_openai(ai) == {"role": "assistant", "content": "hi"}
    assert to_openai(SystemMessage("s", id="s1", metadata={"v": 2})) == {
        "role": "system",
        "content": "s",
    }


def test_from_openai_reads_flowgraph_fields_when_present() -> None:
    wire = {
        "role": "tool",
        "content": "x",
        "tool_call_id": "c1",
        "id": "t1",
        "status": "error",
        "artifact": [1, 2],
        "metadata": {"k": "v"},
    }
    assert from_openai(wire) == ToolMessage(
        "x", tool_call_id="c1", id="t1", status="error", artifact=[1, 2], metadata={"k": "v"}
    )
    ai = from_openai(
        {
            "role": "assistant",
            "content": "a",
            "id": "a1",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "response_metadata": {"finish_reason": "stop"},
            "invalid_tool_calls": [{"id": "z", "name": "f", "args": "{", "error": "e"}],
        }
    )
    assert ai == AIMessage(
        "a",
        id="a1",
        usage=Usage(input_tokens=1, output_tokens=1),
        response_metadata={"finish_reason": "stop"},
        invalid_tool_calls=[InvalidToolCall(id="z", name="f", args="{", error="e")],
    )


def test_remove_message_has_no_openai_form() -> None:
    with pytest.raises(InvalidMessageError, match=r"RemoveMessage.*add_messages") as info:
        to_openai([HumanMessage("a"), RemoveMessage("m7")])
    assert info.value.message_id == "m7"


# -------------------------------------------------------------- multimodal


def test_text_and_image_url() -> None:
    message = HumanMessage(
        [TextPart("What is this?"), ImagePart(url="https://example.com/cat.jpg", detail="high")]
    )
    out = to_openai(message)
    assert out == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?"},
            {
                "type": "image_url",
                "image_url": {"url": "https://example.com/cat.jpg", "detail": "high"},
            },
        ],
    }
    assert from_openai(out) == message
    no_detail = to_openai(HumanMessage([ImagePart(url="https://x/y.png")]))
    assert no_detail["content"] == [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]


def test_inline_image_bytes_become_a_data_url_and_back() -> None:
    message = HumanMessage([ImagePart(data=PNG, mime_type="image/png"), TextPart("describe")])
    out = to_openai(message)
    assert out["content"][0] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{b64(PNG)}"},
    }
    back = from_openai(out)
    assert back == message
    image = back.media[0]  # type: ignore[union-attr]  # a HumanMessage
    assert isinstance(image, ImagePart)
    assert (image.url, image.mime_type) == (None, "image/png")
    assert image.as_bytes() == PNG


def test_data_urls_are_parsed_into_data_and_mime_type() -> None:
    url = f"data:image/webp;name=x.webp;base64,{b64(PNG)}"
    message = from_openai(
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
    )
    assert message.content == [ImagePart(data=PNG, mime_type="image/webp")]
    # a data URL that is not base64 stays a URL; a shorthand string image_url is read too
    plain = "data:text/plain,hello"
    assert from_openai(
        {"role": "user", "content": [{"type": "image_url", "image_url": plain}]}
    ).content == [ImagePart(url=plain)]
    # an ImagePart given a data URL comes back as data (normalised)
    assert from_openai(to_openai(HumanMessage([ImagePart(url=url)]))).content == [
        ImagePart(data=PNG, mime_type="image/webp")
    ]


def test_bad_base64_in_a_data_url_names_the_field() -> None:
    with pytest.raises(InvalidMessageError, match=r"content\.0\.image\.data: .*base64"):
        from_openai(
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,@@"}}
                ],
            }
        )


def test_inline_media_without_mime_type_is_refused() -> None:
    with pytest.raises(InvalidMessageError, match="mime_type"):
        to_openai(HumanMessage([ImagePart(data=PNG)], id="h9"))
    with pytest.raises(InvalidMessageError, match="mime_type"):
        to_openai(HumanMessage([AudioPart(data=WAV)]))


def test_input_audio() -> None:
    message = HumanMessage([TextPart("Transcribe"), AudioPart(data=WAV, mime_type="audio/wav")])
    out = to_openai(message)
    assert out["content"][1] == {
        "type": "input_audio",
        "input_audio": {"data": b64(WAV), "format": "wav"},
    }
    assert from_openai(out) == message
    mp3 = to_openai(HumanMessage([AudioPart(data=b"ID3", mime_type="audio/mpeg")]))
    assert mp3["content"][0]["input_audio"]["format"] == "mp3"
    assert from_openai(mp3).content == [AudioPart(data=b"ID3", mime_type="audio/mpeg")]
    flac = to_openai(HumanMessage([AudioPart(data=b"fLaC", mime_type="audio/x-flac")]))
    assert flac["content"][0]["input_audio"]["format"] == "flac"
    with pytest.raises(InvalidMessageError, match="audio/"):
        to_openai(HumanMessage([AudioPart(data=b"x", mime_type="video/mp4")]))


def test_audio_and_video_urls_use_the_vllm_extension() -> None:
    message = HumanMessage([AudioPart(url="https://x/a.wav"), VideoPart(url="https://x/v.mp4")])
    out = to_openai(message)
    assert out["content"] == [
        {"type": "audio_url", "audio_url": {"url": "https://x/a.wav"}},
        {"type": "video_url", "video_url": {"url": "https://x/v.mp4"}},
    ]
    assert from_openai(out) == message
    inline = HumanMessage([VideoPart(data=b"\x00\x00\x00 ftyp", mime_type="video/mp4")])
    assert from_openai(to_openai(inline)) == inline


def test_pdf_file_part() -> None:
    message = HumanMessage(
        [
            TextPart("Summarise"),
            FilePart(data=PDF, mime_type="application/pdf", filename="report.pdf"),
        ]
    )
    out = to_openai(message)
    assert out["content"][1] == {
        "type": "file",
        "file": {"file_data": f"data:application/pdf;base64,{b64(PDF)}", "filename": "report.pdf"},
    }
    back = from_openai(out)
    assert back == message
    assert back.media[0].as_bytes() == PDF  # type: ignore[union-attr]  # a HumanMessage


def test_file_as_bare_base64_or_file_id() -> None:
    bare = from_openai(
        {
            "role": "user",
            "content": [{"type": "file", "file": {"file_data": b64(PDF), "filename": "r.pdf"}}],
        }
    )
    assert bare.content == [FilePart(data=PDF, mime_type="application/pdf", filename="r.pdf")]
    by_id = from_openai(
        {"role": "user", "content": [{"type": "file", "file": {"file_id": "file-abc123"}}]}
    )
    assert by_id.content == [FilePart(url=f"{OPENAI_FILE_URL_PREFIX}file-abc123")]
    assert to_openai(by_id)["content"] == [{"type": "file", "file": {"file_id": "file-abc123"}}]
    # mime type guessed from the filename when missing
    guessed = to_openai(HumanMessage([FilePart(data=PDF, filename="x.pdf")]))
    assert guessed["content"][0]["file"]["file_data"].startswith("data:application/pdf;base64,")


def test_file_by_link_is_refused_with_the_fix() -> None:
    with pytest.raises(InvalidMessageError, match=r"data=.*openai-file:") as info:
        to_openai(HumanMessage([FilePart(url="https://x/report.pdf")], id="h1"))
    assert info.value.message_id == "h1"


def test_assistant_media_goes_out_as_parts() -> None:
    message = AIMessage([TextPart("Here:"), ImagePart(url="https://x/i.png")])
    assert to_openai(message)["content"] == [
        {"type": "text", "text": "Here:"},
        {"type": "image_url", "image_url": {"url": "https://x/i.png"}},
    ]
    assert from_openai(to_openai(message)) == message


def test_assistant_text_parts_are_joined_into_one_string() -> None:
    message = AIMessage([TextPart("a"), TextPart("b")])
    assert to_openai(message) == {"role": "assistant", "content": "ab"}


def test_native_parts_inside_openai_content_are_accepted() -> None:
    message = from_openai(
        {
            "role": "user",
            "content": [
                "plain",
                {"type": "image", "url": "https://x/i.png"},
                {"type": "image_url", "image_url": {"url": "https://x/j.png", "detail": "low"}},
            ],
        }
    )
    assert message.content == [
        TextPart("plain"),
        ImagePart(url="https://x/i.png"),
        ImagePart(url="https://x/j.png", detail="low"),
    ]


# -------------------------------------------------------------- properties

_text = st.text(max_size=12)
_ids = st.text(alphabet="abc123_", min_size=1, max_size=6)
_user_part = st.one_of(
    st.builds(TextPart, text=_text),
    st.builds(ImagePart, url=st.just("https://x/i.png"), detail=st.sampled_from([None, "auto"])),
    st.builds(ImagePart, data=st.binary(max_size=12), mime_type=st.just("image/jpeg")),
    st.builds(AudioPart, data=st.binary(max_size=12), mime_type=st.just("audio/wav")),
    st.builds(
        FilePart,
        data=st.binary(max_size=12),
        mime_type=st.just("application/pdf"),
        filename=st.none() | st.just("f.pdf"),
    ),
)
_args = st.dictionaries(
    _text, st.none() | st.booleans() | st.integers() | _text | st.lists(st.integers()), max_size=3
)


@st.composite
def _expressible_ai(draw: st.DrawFn) -> AIMessage:
    """AIMessages in the one order Chat Completions can express: reasoning, text, calls."""
    reasoning = draw(_text)
    text = draw(_text)
    calls = draw(
        st.lists(
            st.builds(ToolCallPart, id=_ids, name=_ids, args=_args),
            max_size=3,
            unique_by=lambda c: c.id,
        )
    )
    if not reasoning and not calls:
        return AIMessage(text, name=draw(st.none() | _ids))
    parts: list[Any] = [ReasoningPart(reasoning)] if reasoning else []
    parts += [TextPart(text)] if text else []
    return AIMessage([*parts, *calls], name=draw(st.none() | _ids))


expressible = st.one_of(
    st.builds(SystemMessage, content=_text, name=st.none() | _ids),
    st.builds(
        HumanMessage, content=_text | st.lists(_user_part, max_size=4), name=st.none() | _ids
    ),
    _expressible_ai(),
    st.builds(ToolMessage, content=_text, tool_call_id=_ids),
)


@given(st.lists(expressible, max_size=6))
def test_round_trip_of_what_openai_can_express(messages: list[Any]) -> None:
    wire = to_openai(messages)
    assert json.loads(json.dumps(wire)) == wire  # plain JSON, as it goes on the wire
    assert from_openai(wire) == messages
    assert to_openai(from_openai(wire)) == wire
