"""Model spans of real adapters talking to loopback servers in the providers' wire formats.

The response model, id, finish reasons and token usage on a `chat` span are
what the server sent, parsed by the adapter; request options are what the
call asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from models._loopback import LoopbackServer, Reply, named_sse, sse
from opentelemetry.trace import StatusCode

from flowgraph import (
    END,
    START,
    AnthropicChatModel,
    ChatOptions,
    HumanMessage,
    MessagesState,
    ModelNode,
    OpenAIChatModel,
    StateGraph,
)
from flowgraph.checkpoint import MemoryCheckpointer
from flowgraph.errors import ModelError

from ._spans import Spans

OPENAI_USAGE = {
    "prompt_tokens": 12,
    "completion_tokens": 7,
    "total_tokens": 19,
    "prompt_tokens_details": {"cached_tokens": 8},
}


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    loopback = LoopbackServer().start()
    try:
        yield loopback
    finally:
        loopback.stop()


def ask(model: Any, text: str, thread_id: str, options: ChatOptions | None = None) -> None:
    """One run of a one-node graph calling `model`; the model's connections closed after."""
    g = StateGraph(MessagesState)
    g.add_node("answer", ModelNode(model, options=options))
    g.add_edge(START, "answer")
    g.add_edge("answer", END)
    app = g.compile(checkpointer=MemoryCheckpointer(), name="desk")

    async def run() -> None:
        try:
            await app.ainvoke({"messages": [HumanMessage(text)]}, thread_id=thread_id)
        finally:
            await model.aclose()

    asyncio.run(run())


def openai_reply(**extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-42",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test-2025-06",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Bonjour!"},
                "finish_reason": "length",
            }
        ],
        "usage": OPENAI_USAGE,
        **extra,
    }


def openai_stream() -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-43",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-test-2025-06",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    return sse(
        chunk({"role": "assistant", "content": "Bon"}),
        chunk({"content": "jour!"}),
        chunk({}, "stop"),
        {"id": "chatcmpl-43", "choices": [], "model": "gpt-test-2025-06", "usage": OPENAI_USAGE},
    )


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
def test_an_openai_call_records_what_the_server_answered(
    spans: Spans, server: LoopbackServer, streaming: bool
) -> None:
    server.replies = [
        Reply(body=openai_stream(), content_type="text/event-stream")
        if streaming
        else Reply.json(openai_reply())
    ]
    model = OpenAIChatModel(
        "gpt-test", base_url=f"{server.url}/v1", api_key="sk-test", streaming=streaming
    )
    options = ChatOptions(temperature=0.2, max_tokens=64, top_p=0.9, stop=["\n\n"], seed=7)
    ask(model, "Say hello", "conv-1", options)

    chat = spans.one("chat gpt-test")
    assert spans.parent_of(chat) is spans.one("answer")
    assert dict(chat.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.conversation.id": "conv-1",
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.max_tokens": 64,
        "gen_ai.request.top_p": 0.9,
        "gen_ai.request.seed": 7,
        "gen_ai.request.stop_sequences": ("\n\n",),
        "gen_ai.response.model": "gpt-test-2025-06",
        "gen_ai.response.id": "chatcmpl-43" if streaming else "chatcmpl-42",
        "gen_ai.response.finish_reasons": ("stop",) if streaming else ("length",),
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 7,
        "gen_ai.usage.cache_read.input_tokens": 8,
    }
    sent = server.requests[0].json
    assert (sent["model"], sent["temperature"], sent["seed"]) == ("gpt-test", 0.2, 7)


def test_an_anthropic_call_records_its_mapped_finish_reason_and_usage(
    spans: Spans, server: LoopbackServer
) -> None:
    server.replies = [
        Reply(
            body=named_sse(
                {
                    "type": "message_start",
                    "message": {
                        "id": "msg_7",
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-test-2025",
                        "content": [],
                        "stop_reason": None,
                        "usage": {"input_tokens": 30, "output_tokens": 1},
                    },
                },
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": "Hallo."},
                },
                {"type": "content_block_stop", "index": 0},
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "max_tokens"},
                    "usage": {"output_tokens": 9},
                },
                {"type": "message_stop"},
            ),
            content_type="text/event-stream",
        )
    ]
    model = AnthropicChatModel("claude-test", base_url=server.url, api_key="sk-ant", streaming=True)
    ask(model, "Sag hallo", "conv-2")

    chat = spans.one("chat claude-test")
    attributes = dict(chat.attributes or {})
    assert attributes["gen_ai.provider.name"] == "anthropic"
    assert attributes["gen_ai.conversation.id"] == "conv-2"
    assert attributes["gen_ai.response.model"] == "claude-test-2025"
    assert attributes["gen_ai.response.id"] == "msg_7"
    assert attributes["gen_ai.response.finish_reasons"] == ("length",)
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (
        30,
        9,
    )


def test_a_provider_error_is_recorded_with_its_status_code(
    spans: Spans, server: LoopbackServer
) -> None:
    server.replies = [Reply.json({"error": {"message": "model overloaded"}}, status=503)]
    model = OpenAIChatModel(
        "gpt-test", base_url=f"{server.url}/v1", api_key="sk-test", max_retries=0
    )
    with pytest.raises(ModelError):
        ask(model, "hi", "conv-3")

    chat = spans.one("chat gpt-test")
    assert chat.status.status_code is StatusCode.ERROR
    assert "model overloaded" in (chat.status.description or "")
    assert (chat.attributes or {})["error.type"] == "503"
    assert spans.one("invoke_agent desk").status.status_code is StatusCode.ERROR
