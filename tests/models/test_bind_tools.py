"""`model.bind_tools(tools, tool_choice=...)` on every adapter: the bound tools go out (issue 18).

Each adapter talks to a loopback server speaking its provider's wire format;
the request bodies show the tools and the tool choice as each API expects
them. A plain function (type hints and a docstring) is a tool here too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from flowgraph.models import (
    AnthropicChatModel,
    BaseChatModel,
    BoundChatModel,
    ChatOptions,
    OllamaChatModel,
    OpenAIChatModel,
    ScriptedChatModel,
)

from ._loopback import LoopbackServer, Reply


def get_weather(city: str, days: int = 1) -> str:
    """Look up the weather forecast.

    Args:
        city: The city, e.g. "Paris".
        days: How many days ahead.
    """
    return f"sunny in {city}"


PROVIDERS: dict[str, tuple[Callable[[str], BaseChatModel], dict[str, Any]]] = {
    "openai": (
        lambda url: OpenAIChatModel(
            "gpt-test", base_url=f"{url}/v1", api_key="k", backoff=0, named_tool_choice="object"
        ),
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-test",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "ok"},
                    "finish_reason": "stop",
                }
            ],
        },
    ),
    "ollama": (
        lambda url: OllamaChatModel("qwen3:8b", base_url=url, backoff=0),
        {
            "model": "qwen3:8b",
            "created_at": "2025-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": "ok"},
            "done": True,
            "done_reason": "stop",
        },
    ),
    "anthropic": (
        lambda url: AnthropicChatModel("claude-test", base_url=url, api_key="k", backoff=0),
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 1},
        },
    ),
}


def sent_tool_names(provider: str, body: dict[str, Any]) -> list[str]:
    if provider == "anthropic":
        return [tool["name"] for tool in body["tools"]]
    return [tool["function"]["name"] for tool in body["tools"]]


def sent_schema(provider: str, body: dict[str, Any]) -> dict[str, Any]:
    tool = body["tools"][0]
    return tool["input_schema"] if provider == "anthropic" else tool["function"]["parameters"]


EXPECTED_CHOICE = {
    ("openai", "any"): "required",
    ("anthropic", "any"): {"type": "any"},
    ("openai", "get_weather"): {"type": "function", "function": {"name": "get_weather"}},
    ("anthropic", "get_weather"): {"type": "tool", "name": "get_weather"},
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@pytest.mark.parametrize("choice", ["any", "get_weather"])
def test_the_bound_tools_and_choice_go_out(
    server: LoopbackServer, provider: str, choice: str
) -> None:
    make, reply = PROVIDERS[provider]
    server.replies = [Reply.json(reply)]
    with make(server.url) as model:
        llm = model.bind_tools([get_weather], tool_choice=choice)
        assert isinstance(llm, BoundChatModel)
        assert llm.invoke("Weather in Paris?").text == "ok"
    body = server.requests[0].json
    assert sent_tool_names(provider, body) == ["get_weather"]
    schema = sent_schema(provider, body)
    assert schema["required"] == ["city"]
    assert schema["properties"]["city"]["description"] == 'The city, e.g. "Paris".'
    if provider == "ollama":  # Ollama has no tool_choice: the tools are simply offered
        assert "tool_choice" not in body
    else:
        assert body["tool_choice"] == EXPECTED_CHOICE[(provider, choice)]


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_async_and_streaming_calls_send_them_too(server: LoopbackServer, provider: str) -> None:
    make, reply = PROVIDERS[provider]
    server.replies = [Reply.json(reply)]
    model = make(server.url)
    llm = model.bind_tools([get_weather])

    async def ask() -> str:
        try:
            return (await llm.ainvoke("Weather?")).text
        finally:
            await model.aclose()  # type: ignore[attr-defined]  # every adapter here is HTTP

    assert asyncio.run(ask()) == "ok"
    assert sent_tool_names(provider, server.requests[0].json) == ["get_weather"]


def test_stream_and_astream_offer_the_bound_tools() -> None:
    model = ScriptedChatModel(["one two", "three four"])
    llm = model.bind_tools([get_weather])
    assert sum(llm.stream("hi")).to_message().text == "one two"  # type: ignore[attr-defined]

    async def collect() -> str:
        return "".join([chunk.text async for chunk in llm.astream("hi")])

    assert asyncio.run(collect()) == "three four"
    assert [[t.name for t in r.tools] for r in model.requests] == [["get_weather"]] * 2


def test_call_options_win_over_bound_ones_which_win_over_the_models() -> None:
    model = ScriptedChatModel(["a", "b"], options=ChatOptions(temperature=0.1, max_tokens=9))
    llm = model.bind_tools([get_weather], tool_choice="auto", temperature=0.5)
    llm.invoke("x")
    llm.invoke("x", options=ChatOptions(temperature=0.9, tool_choice="none"))
    first, second = (r.options for r in model.requests)
    assert (first.temperature, first.max_tokens, first.tool_choice) == (0.5, 9, "auto")
    assert (second.temperature, second.max_tokens, second.tool_choice) == (0.9, 9, "none")


def test_a_calls_own_tools_replace_the_bound_ones_and_rebinding_replaces_them() -> None:
    def other(x: int) -> int:
        """Another tool."""
        return x

    model = ScriptedChatModel(["a", "b", "c"])
    llm = model.bind_tools([get_weather], tool_choice="required")
    llm.invoke("x", tools=[other])
    rebound = llm.bind_tools([other])
    rebound.invoke("x")
    assert [t.name for t in model.requests[0].tools] == ["other"]
    assert [t.name for t in model.requests[1].tools] == ["other"]
    assert model.requests[1].options.tool_choice == "required"  # the bound options stay
    assert llm.requests is model.requests  # the wrapped model's attributes read through


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("any", "required"),
        ("required", "required"),
        (True, "required"),
        ("get_weather", "get_weather"),
        ({"type": "function", "function": {"name": "get_weather"}}, "get_weather"),
        ({"type": "tool", "name": "get_weather"}, "get_weather"),
        ({"type": "any"}, "required"),
        ({"type": "auto"}, "auto"),
    ],
)
def test_langchains_tool_choice_spellings(given: object, expected: str) -> None:
    model = ScriptedChatModel(["a"])
    model.bind_tools([get_weather], tool_choice=given).invoke("x")
    assert model.requests[0].options.tool_choice == expected


def test_what_cannot_be_bound_fails_at_bind_time() -> None:
    def undocumented(x: int) -> int:
        return x

    model = ScriptedChatModel(["a"])
    with pytest.raises(ValueError, match="needs a description"):
        model.bind_tools([undocumented])
    with pytest.raises(TypeError, match="parallel_tool_calls"):
        model.bind_tools([get_weather], parallel_tool_calls=False)
    with pytest.raises(ValueError, match="tool_choice"):
        model.bind_tools([get_weather], tool_choice=3)
