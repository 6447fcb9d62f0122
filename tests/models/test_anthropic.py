"""AnthropicChatModel against a loopback server speaking the Messages API and its SSE events."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from pydantic import BaseModel

from flowgraph.errors import BadRequestError, ModelConnectionError, RateLimitError, ServerError
from flowgraph.messages import (
    AIMessage,
    FilePart,
    HumanMessage,
    ImagePart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    Usage,
)
from flowgraph.models import AnthropicChatModel, ChatOptions, ToolSpec

from ._loopback import LoopbackServer, Reply, named_sse, split_awkwardly
from .conftest import Runner

WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


class Answer(BaseModel):
    value: int


def model_for(server: LoopbackServer, **kwargs: Any) -> AnthropicChatModel:
    kwargs.setdefault("backoff", 0)
    return AnthropicChatModel("claude-test", base_url=server.url, api_key="sk-ant", **kwargs)


USAGE = {
    "input_tokens": 20,
    "output_tokens": 30,
    "cache_read_input_tokens": 100,
    "cache_creation_input_tokens": 5,
}
WHOLE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test-2025",
    "content": [
        {"type": "thinking", "thinking": "Need the weather…", "signature": "sig=="},
        {"type": "text", "text": "Prüfe das Wetter."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Zürich"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": USAGE,
}


def event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


def delta(index: int, **fields: Any) -> dict[str, Any]:
    return event("content_block_delta", index=index, delta=fields)


STREAM = named_sse(
    event(
        "message_start",
        message={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test-2025",
            "content": [],
            "stop_reason": None,
            "usage": {**USAGE, "output_tokens": 1},
        },
    ),
    event("content_block_start", index=0, content_block={"type": "thinking", "thinking": ""}),
    delta(0, type="thinking_delta", thinking="Need the "),
    delta(0, type="thinking_delta", thinking="weather…"),
    delta(0, type="signature_delta", signature="sig=="),
    event("content_block_stop", index=0),
    event("ping"),
    event("content_block_start", index=1, content_block={"type": "text", "text": ""}),
    delta(1, type="text_delta", text="Prüfe das "),
    delta(1, type="text_delta", text="Wetter."),
    event("content_block_stop", index=1),
    event(
        "content_block_start",
        index=2,
        content_block={"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
    ),
    delta(2, type="input_json_delta", partial_json=""),
    delta(2, type="input_json_delta", partial_json='{"city": "Zü'),
    delta(2, type="input_json_delta", partial_json='rich"}'),
    event("content_block_stop", index=2),
    event("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 30}),
    event("message_stop"),
)
EXPECTED = AIMessage(
    content=[
        ReasoningPart(text="Need the weather…", signature="sig=="),
        TextPart(text="Prüfe das Wetter."),
        ToolCallPart(id="toolu_1", name="get_weather", args={"city": "Zürich"}),
    ],
    id="msg_1",
    usage=Usage(input_tokens=125, output_tokens=30, cached_tokens=100),
    response_metadata={
        "finish_reason": "tool_calls",
        "stop_reason": "tool_use",
        "model_name": "claude-test-2025",
    },
)


def test_the_request_separates_the_system_prompt_and_maps_every_block(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(WHOLE)]
    pdf = FilePart(data=b"%PDF-1.4", mime_type="application/pdf")
    messages = [
        SystemMessage("Be brief."),
        HumanMessage(
            content=[TextPart(text="Look:"), ImagePart(data=b"\x89PNG", mime_type="image/png"), pdf]
        ),
        AIMessage(
            content=[
                ReasoningPart(text="thinking kept", signature="sig=="),
                ReasoningPart(text="no signature: dropped"),
                TextPart(text="Checking."),
            ],
            tool_calls=[
                {"id": "t1", "name": "get_weather", "args": {"city": "Oslo"}},
                {"id": "t2", "name": "get_weather", "args": {"city": "Rome"}},
            ],
        ),
        ToolMessage("rain", tool_call_id="t1"),
        ToolMessage("no such city", tool_call_id="t2", status="error"),
        HumanMessage("And tomorrow?"),
    ]
    runner.invoke(
        model_for(server, thinking_budget=2048),
        messages,
        tools=[WEATHER],
        options=ChatOptions(tool_choice="required", stop=["END"], temperature=1.0, seed=3),
    )
    request = server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers["x-api-key"] == "sk-ant"
    assert request.headers["anthropic-version"] == "2023-06-01"
    png = base64.b64encode(b"\x89PNG").decode()
    assert request.json == {
        "model": "claude-test",
        "max_tokens": 4096,
        "system": "Be brief.",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look:"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": png},
                    },
                    {
                        "type": "document",
                        "source": {
                            "type": "base64",
                            "media_type": "application/pdf",
                            "data": base64.b64encode(b"%PDF-1.4").decode(),
                        },
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "thinking kept", "signature": "sig=="},
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "get_weather",
                        "input": {"city": "Oslo"},
                    },
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "get_weather",
                        "input": {"city": "Rome"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "rain"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "t2",
                        "content": "no such city",
                        "is_error": True,
                    },
                    {"type": "text", "text": "And tomorrow?"},
                ],
            },
        ],
        "tools": [
            {
                "name": "get_weather",
                "description": "The weather in a city.",
                "input_schema": WEATHER.parameters,
            }
        ],
        "tool_choice": {"type": "any"},
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "temperature": 1.0,
        "stop_sequences": ["END"],
    }


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("get_weather", {"type": "tool", "name": "get_weather"}),
    ],
)
def test_tool_choice_mapping(choice: str, wire: dict[str, str]) -> None:
    from flowgraph.models.anthropic import _tool_choice

    assert _tool_choice(choice) == wire


def test_structured_output_goes_to_output_config_with_closed_objects(
    server: LoopbackServer,
) -> None:
    reply = {
        **WHOLE,
        "content": [{"type": "text", "text": '{"value": 4}'}],
        "stop_reason": "end_turn",
    }
    server.replies = [Reply.json(reply)]
    with model_for(server) as model:
        message = model.invoke("2+2?", options=ChatOptions(response_format=Answer, max_tokens=10))
    body = server.requests[0].json
    assert body["max_tokens"] == 10
    assert body["output_config"] == {
        "format": {
            "type": "json_schema",
            "schema": {**Answer.model_json_schema(), "additionalProperties": False},
        }
    }
    assert message.metadata["parsed"] == Answer(value=4)
    assert message.response_metadata["finish_reason"] == "stop"


def test_a_whole_message_and_its_awkwardly_split_event_stream_agree(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(WHOLE), Reply(pieces=split_awkwardly(STREAM), piece_delay=0)]
    model = model_for(server)
    assert runner.invoke(model, "weather?") == EXPECTED
    chunks = runner.stream(model, "weather?")
    assert server.requests[1].json["stream"] is True
    assert sum(chunks).to_message() == EXPECTED
    assert {c.id for c in chunks} == {"msg_1"}


def test_the_signature_survives_a_round_trip(server: LoopbackServer) -> None:
    server.replies = [
        Reply.json(WHOLE),
        Reply.json({**WHOLE, "content": [{"type": "text", "text": "Sunny."}]}),
    ]
    with model_for(server) as model:
        first = model.invoke("weather?", tools=[WEATHER])
        model.invoke(
            ["weather?", first, ToolMessage("sunny", tool_call_id="toolu_1")], tools=[WEATHER]
        )
    sent = server.requests[1].json["messages"][1]["content"][0]
    assert sent == {"type": "thinking", "thinking": "Need the weather…", "signature": "sig=="}


def test_overloaded_529_is_retried(server: LoopbackServer, runner: Runner) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    server.replies = [Reply.json(overloaded, status=529), Reply.json(WHOLE)]
    assert runner.invoke(model_for(server), "hi") == EXPECTED
    assert len(server.requests) == 2


def test_errors_carry_anthropics_message(server: LoopbackServer) -> None:
    bad = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: too big"},
    }
    server.replies = [Reply.json(bad, status=400)]
    with model_for(server) as model, pytest.raises(BadRequestError) as caught:
        model.invoke("hi")
    assert caught.value.provider_message == "max_tokens: too big"


def test_an_error_event_first_is_retried_and_later_is_raised(server: LoopbackServer) -> None:
    start = STREAM.split(b"\n\n")[0] + b"\n\n"
    error = named_sse(event("error", error={"type": "overloaded_error", "message": "Overloaded"}))
    limited = named_sse(event("error", error={"type": "rate_limit_error", "message": "slow"}))
    server.replies = [Reply(pieces=[error]), Reply(pieces=[STREAM]), Reply(pieces=[start, limited])]
    with model_for(server, max_retries=2) as model:
        assert sum(model.stream("hi")).to_message() == EXPECTED
        assert len(server.requests) == 2
        with pytest.raises(RateLimitError, match="slow"):
            list(model.stream("hi"))  # nothing delivered yet, so retried: same error again
    assert len(server.requests) == 5


def test_an_error_after_output_is_raised_at_once(server: LoopbackServer) -> None:
    head = b"\n\n".join(STREAM.split(b"\n\n")[:4]) + b"\n\n"
    error = named_sse(event("error", error={"type": "api_error", "message": "internal"}))
    server.replies = [Reply(pieces=[head, error])]
    with model_for(server) as model, pytest.raises(ServerError, match="internal"):
        list(model.stream("hi"))
    assert len(server.requests) == 1


def test_a_stream_without_message_stop_is_cut(server: LoopbackServer, runner: Runner) -> None:
    server.replies = [Reply(pieces=[STREAM.rsplit(b"event: message_stop", 1)[0]])]
    with pytest.raises(ModelConnectionError, match="message_stop"):
        runner.stream(model_for(server), "hi")


def test_json_mode_without_a_schema_is_refused_clearly() -> None:
    from flowgraph.models._call import Call
    from flowgraph.models.anthropic import build_anthropic_body

    call = Call("m", [HumanMessage("hi")], (), ChatOptions(response_format="json"), False)
    with pytest.raises(ValueError, match="needs a JSON schema"):
        build_anthropic_body(call)
