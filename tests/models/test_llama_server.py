"""OpenAIChatModel against llama.cpp's own OpenAI-compatible server (a server we did not write).

Start it with ``../shared/tools/llama-server/start.sh PORT`` and export
``FLOWGRAPH_TEST_OPENAI_URL=http://127.0.0.1:PORT/v1``. Its tiny scripted
model always says ``Hello from a tiny scripted model.``, calls a tool when
told to (arguments following the schema, strings "Paris"), writes JSON
for response_format, and stops at max_tokens and stop sequences.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
from pydantic import BaseModel

from flowgraph.messages import ToolMessage
from flowgraph.models import ChatOptions, OpenAIChatModel

URL = os.environ.get("FLOWGRAPH_TEST_OPENAI_URL")
pytestmark = pytest.mark.skipif(
    not URL,
    reason="FLOWGRAPH_TEST_OPENAI_URL is not set; start ../shared/tools/llama-server/start.sh "
    "PORT and export FLOWGRAPH_TEST_OPENAI_URL=http://127.0.0.1:PORT/v1",
)
HELLO = "Hello from a tiny scripted model."


class GetWeather(BaseModel):
    """The current weather in a city."""

    city: str


class GetTime(BaseModel):
    """The local time in a time zone."""

    zone: str


class City(BaseModel):
    city: str
    population: int


@pytest.fixture(scope="module")
def model() -> Any:
    with OpenAIChatModel("tiny", base_url=URL or "", timeout=120) as llama:
        yield llama


def test_a_plain_reply_with_usage_and_finish_reason(model: OpenAIChatModel) -> None:
    reply = model.invoke("Hi!")
    assert reply.text == HELLO
    assert reply.response_metadata["finish_reason"] == "stop"
    assert reply.id and reply.id.startswith("chatcmpl")
    assert reply.usage is not None
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens == 7
    assert reply.usage.total_tokens == reply.usage.input_tokens + reply.usage.output_tokens


def test_max_tokens_gives_length_and_stop_sequences_stop(model: OpenAIChatModel) -> None:
    short = model.invoke("Hi!", options=ChatOptions(max_tokens=3))
    assert short.response_metadata["finish_reason"] == "length"
    assert short.usage is not None and short.usage.output_tokens == 3
    assert HELLO.startswith(short.text)
    stopped = model.invoke("Hi!", options=ChatOptions(stop=["tiny"]))
    assert stopped.text == "Hello from a "
    assert stopped.response_metadata["finish_reason"] == "stop"


def test_a_stream_reassembles_into_what_invoke_returns(model: OpenAIChatModel) -> None:
    chunks = list(model.stream("Hi!"))
    assert len([c for c in chunks if c.text]) >= 5  # token by token
    streamed = sum(chunks).to_message()
    whole = model.invoke("Hi!")
    ignore = {"id", "usage"}  # a fresh completion id; the prompt cache changes cached_tokens
    assert streamed.model_dump(exclude=ignore) == whole.model_dump(exclude=ignore)
    assert streamed.usage is not None and whole.usage is not None
    assert streamed.usage.output_tokens == whole.usage.output_tokens


def test_a_required_tool_call_then_its_result_back(model: OpenAIChatModel) -> None:
    tools = [GetTime, GetWeather]
    asked = "What is the weather in Paris?"
    # A named tool_choice: this server ignores OpenAI's object form, so only that tool is
    # sent with "required" (see OpenAIChatModel.named_tool_choice).
    reply = model.invoke(asked, tools=tools, options=ChatOptions(tool_choice="GetWeather"))
    assert reply.response_metadata["finish_reason"] == "tool_calls"
    (call,) = reply.tool_calls
    assert call.name == "GetWeather"
    assert GetWeather.model_validate(call.args) == GetWeather(city="Paris")
    assert reply.text == HELLO  # this server writes text before the call: both are kept

    result = ToolMessage("Sunny, 24 degrees.", tool_call_id=call.id)
    final = model.invoke([asked, reply, result], tools=tools)
    assert final.text == HELLO
    assert final.response_metadata["finish_reason"] == "stop"


def test_streamed_tool_call_deltas_reassemble(model: OpenAIChatModel) -> None:
    chunks = list(
        model.stream("Weather?", tools=[GetWeather], options=ChatOptions(tool_choice="required"))
    )
    assert any(c.tool_call_chunks for c in chunks)
    message = sum(chunks).to_message()
    assert [(c.name, c.args) for c in message.tool_calls] == [("GetWeather", {"city": "Paris"})]
    assert message.response_metadata["finish_reason"] == "tool_calls"


def test_response_format_gives_a_parsed_object(model: OpenAIChatModel) -> None:
    reply = model.invoke("A city, please.", options=ChatOptions(response_format=City))
    assert isinstance(reply.metadata["parsed"], City)
    assert reply.metadata["parsed"].city == "Paris"


def test_async_invoke_and_stream(model: OpenAIChatModel) -> None:
    async def main() -> tuple[str, str]:
        try:
            whole = await model.ainvoke("Hi!")
            text = "".join([c.text async for c in model.astream("Hi!")])
            return whole.text, text
        finally:
            await model.aclose()

    assert asyncio.run(main()) == (HELLO, HELLO)


def test_the_server_reports_an_unknown_route_as_not_found() -> None:
    from flowgraph.errors import NotFoundError
    from flowgraph.models import OllamaChatModel

    base = (URL or "").removesuffix("/v1")
    with OllamaChatModel("tiny", base_url=base) as ollama, pytest.raises(NotFoundError):
        ollama.invoke("Hi!")
