"""OllamaChatModel against a loopback server speaking /api/chat (NDJSON streaming)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from pydantic import BaseModel

from flowgraph.errors import InvalidMessageError, ModelConnectionError, NotFoundError, ServerError
from flowgraph.messages import (
    AIMessage,
    HumanMessage,
    ImagePart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    Usage,
)
from flowgraph.models import ChatOptions, OllamaChatModel, ToolSpec

from ._loopback import LoopbackServer, Reply, ndjson, split_awkwardly
from .conftest import Runner

WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
PNG = b"\x89PNG\r\n\x1a\nfake"


class Answer(BaseModel):
    value: int


def model_for(server: LoopbackServer, **kwargs: Any) -> OllamaChatModel:
    kwargs.setdefault("backoff", 0)
    return OllamaChatModel("qwen3:8b", base_url=server.url, **kwargs)


def line(content: str = "", *, thinking: str | None = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking is not None:
        message["thinking"] = thinking
    if "tool_calls" in extra:
        message["tool_calls"] = extra.pop("tool_calls")
    return {"model": "qwen3:8b", "created_at": "2025-01-01T00:00:00Z", "message": message, **extra}


DONE = {
    "done": True,
    "done_reason": "stop",
    "total_duration": 100,
    "prompt_eval_count": 26,
    "eval_count": 12,
}
CALLS = [
    {"id": "call_1", "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Köln"}}}
]
WHOLE = line("Schön, ich prüfe.", thinking="Wetter… ja", tool_calls=CALLS, **DONE)
STREAM = ndjson(
    line("", thinking="Wetter"),
    line("", thinking="… ja"),
    line("Schön, "),
    line("ich prüfe."),
    line("", tool_calls=CALLS),
    line("", **DONE),
)
EXPECTED = AIMessage(
    content=[
        ReasoningPart(text="Wetter… ja"),
        TextPart(text="Schön, ich prüfe."),
        ToolCallPart(id="call_1", name="get_weather", args={"city": "Köln"}),
    ],
    usage=Usage(input_tokens=26, output_tokens=12),
    response_metadata={
        "finish_reason": "tool_calls",
        "done_reason": "stop",
        "model_name": "qwen3:8b",
    },
)


def test_the_request_body_is_exactly_what_api_chat_expects(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(line("ok", **DONE))]
    model = model_for(server, think=True, keep_alive="5m", options=ChatOptions(temperature=0.3))
    messages = [
        SystemMessage("Be brief."),
        HumanMessage(content=[TextPart(text="What is this?"), ImagePart(data=PNG)]),
        AIMessage(
            content=[ReasoningPart(text="look it up"), TextPart(text="")],
            tool_calls=[{"id": "c1", "name": "get_weather", "args": {"city": "Oslo"}}],
        ),
        ToolMessage("rain", tool_call_id="c1"),
    ]
    runner.invoke(
        model,
        messages,
        tools=[WEATHER],
        options=ChatOptions(max_tokens=64, stop=["END"], seed=1, extra={"num_ctx": 8192}),
    )
    request = server.requests[0]
    assert (request.method, request.path) == ("POST", "/api/chat")
    assert "authorization" not in request.headers
    assert request.json == {
        "model": "qwen3:8b",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": "What is this?",
                "images": [base64.b64encode(PNG).decode()],
            },
            {
                "role": "assistant",
                "content": "",
                "thinking": "look it up",
                "tool_calls": [
                    {"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
                ],
            },
            {"role": "tool", "content": "rain", "tool_name": "get_weather"},
        ],
        "stream": False,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "The weather in a city.",
                    "parameters": WEATHER.parameters,
                },
            }
        ],
        "think": True,
        "keep_alive": "5m",
        "options": {
            "temperature": 0.3,
            "seed": 1,
            "num_predict": 64,
            "stop": ["END"],
            "num_ctx": 8192,
        },
    }


def test_format_and_tool_choice_none(server: LoopbackServer) -> None:
    server.replies = [Reply.json(line('{"value": 4}', **DONE))]
    with model_for(server) as model:
        reply = model.invoke(
            "2+2?", tools=[WEATHER], options=ChatOptions(response_format=Answer, tool_choice="none")
        )
        model.invoke("2+2?", options=ChatOptions(response_format="json", extra={"think": False}))
    first, second = (r.json for r in server.requests)
    assert first["format"] == Answer.model_json_schema()
    assert "tools" not in first
    assert (second["format"], second["think"]) == ("json", False)
    assert "options" not in second
    assert reply.metadata["parsed"] == Answer(value=4)


def test_a_whole_reply_and_an_awkwardly_split_stream_give_the_same_message(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(WHOLE), Reply(pieces=split_awkwardly(STREAM), piece_delay=0)]
    model = model_for(server)
    assert runner.invoke(model, "weather?") == EXPECTED
    chunks = runner.stream(model, "weather?")
    assert server.requests[1].json["stream"] is True
    assert sum(chunks).to_message() == EXPECTED


def test_tool_calls_without_ids_get_unique_ones(server: LoopbackServer) -> None:
    calls = [
        {"function": {"name": "a", "arguments": {}}},
        {"function": {"name": "b", "arguments": {"x": [1, 2]}}},
    ]
    server.replies = [Reply(pieces=[ndjson(line("", tool_calls=calls), line("", **DONE))])]
    with model_for(server) as model:
        message = sum(model.stream("go")).to_message()
    assert [(c.name, c.args) for c in message.tool_calls] == [("a", {}), ("b", {"x": [1, 2]})]
    ids = [c.id for c in message.tool_calls]
    assert len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)


def test_done_reason_length_and_missing_prompt_count(server: LoopbackServer) -> None:
    done = {"done": True, "done_reason": "length", "eval_count": 3}
    server.replies = [Reply.json(line("one two three", **done))]
    with model_for(server) as model:
        message = model.invoke("count")
    assert message.response_metadata["finish_reason"] == "length"
    assert message.usage == Usage(input_tokens=0, output_tokens=3)


def test_a_missing_model_is_not_found_with_ollamas_message(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json({"error": "model 'nope' not found"}, status=404)]
    with pytest.raises(NotFoundError, match="model 'nope' not found"):
        runner.invoke(model_for(server), "hi")


def test_an_error_line_mid_stream_raises(server: LoopbackServer) -> None:
    server.replies = [Reply(pieces=[ndjson(line("Hel"), {"error": "out of memory"})])]
    with model_for(server) as model, pytest.raises(ServerError, match="out of memory"):
        list(model.stream("hi"))


def test_a_stream_without_its_done_line_is_cut(server: LoopbackServer, runner: Runner) -> None:
    server.replies = [Reply(pieces=[ndjson(line("Hel"), line("lo"))])]
    with pytest.raises(ModelConnectionError, match='"done": true'):
        runner.stream(model_for(server), "hi")


def test_images_by_link_and_other_media_are_refused_with_the_fix() -> None:
    from flowgraph.messages import AudioPart
    from flowgraph.models.ollama import ollama_messages

    with pytest.raises(InvalidMessageError, match="inline"):
        ollama_messages([HumanMessage(content=[ImagePart(url="https://x/y.png")])])
    with pytest.raises(InvalidMessageError, match="text and images only"):
        ollama_messages([HumanMessage(content=[AudioPart(data=b"RIFF", mime_type="audio/wav")])])
    data_url = f"data:image/png;base64,{base64.b64encode(PNG).decode()}"
    sent = ollama_messages([HumanMessage(content=[ImagePart(url=data_url)])])
    assert sent[0]["images"] == [base64.b64encode(PNG).decode()]


def test_ollama_host_without_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5:11434")
    assert OllamaChatModel("m").base_url == "http://10.0.0.5:11434"
