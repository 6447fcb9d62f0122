"""OpenAIChatModel against a loopback server speaking Chat Completions, streaming included."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from flowgraph.messages import (
    AIMessage,
    HumanMessage,
    ImagePart,
    InvalidToolCall,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    Usage,
)
from flowgraph.models import ChatOptions, OpenAIChatModel, ToolSpec

from ._loopback import LoopbackServer, Reply, split_awkwardly, sse
from .conftest import Runner

WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = ToolSpec("get_time", "", {"type": "object", "properties": {}})

USAGE = {
    "prompt_tokens": 10,
    "completion_tokens": 5,
    "total_tokens": 15,
    "prompt_tokens_details": {"cached_tokens": 4},
    "completion_tokens_details": {"reasoning_tokens": 2},
}


class City(BaseModel):
    city: str
    population: int


def model_for(server: LoopbackServer, **kwargs: Any) -> OpenAIChatModel:
    kwargs.setdefault("backoff", 0)
    return OpenAIChatModel("gpt-test", base_url=f"{server.url}/v1", api_key="sk-test", **kwargs)


def completion(
    content: str | None = "Hello!",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    reasoning: str | None = None,
    finish: str = "stop",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    if reasoning:
        message["reasoning_content"] = reasoning
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test-2025",
        "system_fingerprint": "fp_1",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": USAGE,
    }


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test-2025",
        "system_fingerprint": "fp_1",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def call_delta(index: int, args: str, call_id: str | None = None, name: str | None = None) -> Any:
    call: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if call_id:
        call["id"] = call_id
        call["type"] = "function"
        call["function"]["name"] = name
    return {"tool_calls": [call]}


# A reply with reasoning, multi-byte text and two tool calls, whole and streamed.
TOOL_CALLS = [
    {
        "id": "call_a",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Zürich ☀"}'},
    },
    {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": ""}},
]
WHOLE = completion(
    "Grüße 🌍, let me check.", tool_calls=TOOL_CALLS, reasoning="Think… ok", finish="tool_calls"
)
STREAM = sse(
    chunk({"role": "assistant", "content": None}),
    chunk({"reasoning_content": "Think"}),
    chunk({"reasoning_content": "… ok"}),
    chunk({"content": "Grüße "}),
    chunk({"content": "🌍, let me check."}),
    chunk(call_delta(0, "", "call_a", "get_weather")),
    chunk(call_delta(0, '{"city":"Z')),
    chunk(call_delta(1, "", "call_b", "get_time")),
    chunk(call_delta(0, 'ürich ☀"}')),
    chunk({}, "tool_calls"),
    {"id": "chatcmpl-1", "choices": [], "model": "gpt-test-2025", "usage": USAGE},
)
EXPECTED = AIMessage(
    content=[
        ReasoningPart(text="Think… ok"),
        TextPart(text="Grüße 🌍, let me check."),
        ToolCallPart(id="call_a", name="get_weather", args={"city": "Zürich ☀"}),
        ToolCallPart(id="call_b", name="get_time", args={}),
    ],
    id="chatcmpl-1",
    usage=Usage(
        input_tokens=10, output_tokens=5, total_tokens=15, cached_tokens=4, reasoning_tokens=2
    ),
    response_metadata={
        "finish_reason": "tool_calls",
        "model_name": "gpt-test-2025",
        "system_fingerprint": "fp_1",
    },
)


# ------------------------------------------------------------------ requests


def test_the_request_body_and_headers_are_exactly_what_chat_completions_expects(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(completion())]
    model = model_for(
        server,
        named_tool_choice="object",
        options=ChatOptions(temperature=0.2, max_tokens=50, seed=7),
    )
    messages = [
        SystemMessage("Be brief."),
        HumanMessage(
            content=[TextPart(text="What is this?"), ImagePart(url="https://x/cat.png")],
            name="ann",
        ),
        AIMessage("", tool_calls=[{"id": "c1", "name": "get_weather", "args": {"city": "Oslo"}}]),
        ToolMessage("rain", tool_call_id="c1"),
    ]
    runner.invoke(
        model,
        messages,
        tools=[WEATHER, TIME],
        options=ChatOptions(tool_choice="get_weather", stop=["END"], temperature=0.0),
    )
    request = server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["content-type"] == "application/json"
    assert request.json == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "name": "ann",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": "https://x/cat.png"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                    }
                ],
            },
            {"role": "tool", "content": "rain", "tool_call_id": "c1"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "The weather in a city.",
                    "parameters": WEATHER.parameters,
                },
            },
            {"type": "function", "function": {"name": "get_time", "parameters": TIME.parameters}},
        ],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "temperature": 0.0,
        "max_tokens": 50,
        "seed": 7,
        "stop": ["END"],
    }


def test_streaming_asks_for_usage_and_response_format_sends_the_schema(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply(pieces=[sse(chunk({"content": "{}"}, "stop"))])]
    runner.stream(
        model_for(server),
        "hi",
        options=ChatOptions(response_format=City, tool_choice="required", extra={"n": 1}),
    )
    body = server.requests[0].json
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tool_choice"] == "required"
    assert body["n"] == 1
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "City", "schema": City.model_json_schema()},
    }
    assert server.requests[0].headers["accept"] == "text/event-stream"


def test_reasoning_goes_back_only_when_asked_and_openai_gets_max_completion_tokens() -> None:
    from flowgraph.models._call import Call
    from flowgraph.models.openai import build_openai_body

    thought = AIMessage(content=[ReasoningPart(text="hmm"), TextPart(text="4")])
    call = Call("m", [HumanMessage("2+2?"), thought], (), ChatOptions(max_tokens=5), False)
    assert "reasoning_content" not in build_openai_body(call)["messages"][1]
    sent = build_openai_body(call, send_reasoning=True, max_tokens_key="max_completion_tokens")
    assert sent["messages"][1]["reasoning_content"] == "hmm"
    assert sent["max_completion_tokens"] == 5
    assert OpenAIChatModel("gpt-4o", api_key="k").max_tokens_key == "max_completion_tokens"
    assert OpenAIChatModel("x", base_url="http://h:1/v1").max_tokens_key == "max_tokens"


def test_a_named_tool_choice_is_sent_as_required_with_only_that_tool_off_openai() -> None:
    from flowgraph.models._call import Call
    from flowgraph.models.openai import build_openai_body

    call = Call(
        "m", [HumanMessage("hi")], (WEATHER, TIME), ChatOptions(tool_choice="get_time"), False
    )
    body = build_openai_body(call, named_tool_choice="required")
    assert body["tool_choice"] == "required"
    assert [t["function"]["name"] for t in body["tools"]] == ["get_time"]
    assert OpenAIChatModel("m", base_url="http://127.0.0.1:1/v1").named_tool_choice == "required"
    assert OpenAIChatModel("m", api_key="k").named_tool_choice == "object"


def test_options_layers_model_default_then_call(server: LoopbackServer) -> None:
    server.replies = [Reply.json(completion())]
    model = model_for(server, options=ChatOptions(model="big", temperature=1.0, top_p=0.5))
    model.invoke("hi", options=ChatOptions(temperature=0.1))
    body = server.requests[0].json
    assert (body["model"], body["temperature"], body["top_p"]) == ("big", 0.1, 0.5)
    model.close()


# ----------------------------------------------------------------- responses


def test_a_whole_reply_is_parsed_with_usage_finish_reason_model_and_id(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(WHOLE)]
    assert runner.invoke(model_for(server), "hi", tools=[WEATHER, TIME]) == EXPECTED


def test_a_stream_split_anywhere_reassembles_into_exactly_the_invoke_message(
    server: LoopbackServer, runner: Runner
) -> None:
    pieces = split_awkwardly(STREAM)
    assert len(pieces) > 50
    server.replies = [Reply(pieces=pieces, piece_delay=0), Reply.json(WHOLE)]
    model = model_for(server)
    chunks = runner.stream(model, "hi")
    assert sum(chunks).to_message() == EXPECTED
    assert runner.invoke(model, "hi") == EXPECTED
    assert {c.id for c in chunks} == {"chatcmpl-1"}
    assert "".join(c.text for c in chunks) == "Grüße 🌍, let me check."


def test_invoke_with_a_handler_streams_under_the_hood_and_reports_each_piece(
    server: LoopbackServer, runner: Runner
) -> None:
    from flowgraph.models import StreamingHandler

    events: list[tuple[str, Any]] = []

    class Recorder(StreamingHandler):
        def on_partial_text(self, text: str) -> None:
            events.append(("text", text))

        def on_partial_reasoning(self, text: str) -> None:
            events.append(("reasoning", text))

        def on_partial_tool_call(self, call: Any) -> None:
            events.append(("tool", (call.index, call.args)))

        def on_complete_response(self, message: AIMessage) -> None:
            events.append(("done", message))

    server.replies = [Reply(pieces=[STREAM])]
    message = runner.invoke(model_for(server), "hi", handler=Recorder())
    assert message == EXPECTED
    assert server.requests[0].json["stream"] is True
    assert events[:4] == [
        ("reasoning", "Think"),
        ("reasoning", "… ok"),
        ("text", "Grüße "),
        ("text", "🌍, let me check."),
    ]
    assert ("tool", (1, "")) in events
    assert events[-1] == ("done", EXPECTED)


def test_arguments_that_do_not_parse_become_invalid_tool_calls(
    server: LoopbackServer, runner: Runner
) -> None:
    broken = [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": '}},
        {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "[1]"}},
    ]
    server.replies = [Reply.json(completion(None, tool_calls=broken, finish="tool_calls"))]
    message = runner.invoke(model_for(server), "hi")
    assert message.tool_calls == []
    assert [(c.id, c.name, c.args) for c in message.invalid_tool_calls] == [
        ("c1", "f", '{"a": '),
        ("c2", "g", "[1]"),
    ]
    assert all(isinstance(c, InvalidToolCall) and c.error for c in message.invalid_tool_calls)


def test_structured_output_is_parsed_onto_the_message_in_both_paths(
    server: LoopbackServer, runner: Runner
) -> None:
    text = '{"city": "Paris", "population": 2100000}'
    server.replies = [
        Reply.json(completion(text)),
        Reply(pieces=[sse(chunk({"content": text[:9]}), chunk({"content": text[9:]}, "stop"))]),
    ]
    model = model_for(server, stream_usage=False)
    options = ChatOptions(response_format=City)
    whole = runner.invoke(model, "hi", options=options)
    assert whole.metadata["parsed"] == City(city="Paris", population=2100000)
    streamed = sum(runner.stream(model, "hi", options=options)).to_message()
    assert streamed.metadata == whole.metadata


def test_structured_output_that_does_not_fit_says_why(server: LoopbackServer) -> None:
    server.replies = [Reply.json(completion('{"city": 3}'))]
    with model_for(server) as model:
        message = model.invoke("hi", options=ChatOptions(response_format=City))
    assert "parsed" not in message.metadata
    assert "does not fit City" in message.metadata["parsing_error"]


def test_refusals_and_servers_without_done_or_usage(server: LoopbackServer) -> None:
    body = sse(
        chunk({"refusal": "I can't "}),
        chunk({"refusal": "help."}, "stop"),
        done=False,
    )
    server.replies = [Reply(pieces=[body])]
    with model_for(server, stream_usage=False) as model:
        message = sum(model.stream("hi")).to_message()
    assert message.response_metadata["refusal"] == "I can't help."
    assert message.text == ""


def test_the_messages_of_a_round_trip_can_be_sent_back(server: LoopbackServer) -> None:
    server.replies = [Reply.json(WHOLE), Reply.json(completion("Sunny."))]
    model = model_for(server)
    first = model.invoke("weather?", tools=[WEATHER, TIME])
    results = [ToolMessage("sunny", tool_call_id=c.id) for c in first.tool_calls]
    model.invoke(["weather?", first, *results], tools=[WEATHER, TIME])
    sent = server.requests[1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
    assert json.loads(sent[1]["tool_calls"][0]["function"]["arguments"]) == {"city": "Zürich ☀"}
    model.close()
