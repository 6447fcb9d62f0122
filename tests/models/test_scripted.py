"""ScriptedChatModel, and how every model reports to a running graph (Budget, tokens, stream)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from flowgraph import END, START, Budget, MessagesState, StateGraph
from flowgraph.errors import BudgetExceededError, InvalidMessageError, ModelError, ServerError
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    ReasoningPart,
    RemoveMessage,
    TextPart,
    Usage,
)
from flowgraph.models import (
    ChatModelListener,
    ChatOptions,
    ModelRequestEvent,
    ModelResponseEvent,
    ScriptedChatModel,
    StreamingHandler,
)

from ._loopback import LoopbackServer, Reply
from .conftest import Runner
from .test_openai import STREAM, completion, model_for


class Weather(BaseModel):
    city: str
    degrees: int


def test_replies_come_in_order_and_requests_are_recorded(runner: Runner) -> None:
    model = ScriptedChatModel(
        [
            "Hello there.",
            {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]},
            AIMessage("Done.", id="fixed"),
        ]
    )
    first = runner.invoke(model, "hi", tools=[Weather], options=ChatOptions(temperature=0))
    assert first.text == "Hello there."
    assert first.id is None  # outside a run nothing is invented
    second = runner.invoke(model, ["hi", first, "weather?"])
    assert [(c.id, c.name, c.args) for c in second.tool_calls] == [
        ("call_2_0", "get_weather", {"city": "Paris"})
    ]
    assert second.response_metadata == {"finish_reason": "tool_calls", "model_name": "scripted"}
    assert runner.invoke(model, "again").id == "fixed"
    assert model.calls == 3
    assert model.requests[0].tools[0].name == "Weather"
    assert model.requests[0].options.temperature == 0
    assert [m.text for m in model.requests[1].messages] == ["hi", "Hello there.", "weather?"]


def test_running_out_of_replies_says_so(runner: Runner) -> None:
    model = ScriptedChatModel(["only one"])
    runner.invoke(model, "a")
    with pytest.raises(ModelError, match="has 1 replies and was called a 2nd time"):
        runner.invoke(model, "b")


def test_a_function_answers_from_the_messages_and_exceptions_are_raised() -> None:
    model = ScriptedChatModel(lambda messages: f"You said {len(messages)} things.")
    assert model.invoke(["a", "b"]).text == "You said 2 things."
    failing = ScriptedChatModel([ServerError("overloaded", status_code=529), "recovered"])
    with pytest.raises(ServerError):
        failing.invoke("hi")
    assert failing.invoke("hi").text == "recovered"


def test_streams_come_in_small_chunks_that_sum_to_the_invoke_reply(runner: Runner) -> None:
    reply = {
        "reasoning": "Let me think about it.",
        "content": "It is sunny and warm today.",
        "tool_calls": [{"id": "c1", "name": "f", "args": {"query": "weather in Paris"}}],
    }
    chunks = runner.stream(ScriptedChatModel([reply]), "hi")
    assert len(chunks) > 10
    assert [c.text for c in chunks if c.text][:3] == ["It ", "is ", "sunny "]
    whole = runner.invoke(ScriptedChatModel([reply]), "hi")
    assert sum(chunks).to_message() == whole
    assert whole.content[0] == ReasoningPart(text="Let me think about it.")
    assert whole.usage == Usage(input_tokens=1, output_tokens=6 + 5 + 4)


def test_structured_output_is_parsed(runner: Runner) -> None:
    model = ScriptedChatModel(['{"city": "Oslo", "degrees": 3}'] * 2)
    options = ChatOptions(response_format=Weather)
    assert runner.invoke(model, "hi", options=options).metadata["parsed"] == Weather(
        city="Oslo", degrees=3
    )
    chunks = runner.stream(model, "hi", options=options)
    assert chunks[-1].metadata == {"parsed": Weather(city="Oslo", degrees=3)}


def test_listeners_and_handlers_see_each_call() -> None:
    log: list[Any] = []

    class Listener(ChatModelListener):
        def on_request(self, event: ModelRequestEvent) -> None:
            event.attributes["started"] = True
            log.append(("request", event.provider, event.model, event.streaming))

        def on_response(self, event: ModelResponseEvent) -> None:
            assert event.request.attributes["started"]
            log.append(("response", event.message.text, event.usage, event.attempts))
            assert event.latency >= 0

    class Broken(ChatModelListener):
        def on_request(self, event: ModelRequestEvent) -> None:
            raise RuntimeError("listeners must not break calls")

    class Handler(StreamingHandler):
        def on_partial_text(self, text: str) -> None:
            log.append(("text", text))

    model = ScriptedChatModel(["one two"], listeners=[Broken(), Listener()])
    model.invoke("x", handler=Handler())
    assert log == [
        ("request", "scripted", "scripted", True),
        ("text", "one "),
        ("text", "two"),
        ("response", "one two", Usage(input_tokens=1, output_tokens=2), 1),
    ]


# ----------------------------------------------------------- inside a graph


def graph_with(model: Any, *, use_stream: bool = False, budget: Budget | None = None) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        if use_stream:
            reply = sum(model.stream(state.messages)).to_message()
        else:
            reply = model.invoke(state.messages)
        return {"messages": [reply]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("again", agent)
    g.add_edge(START, "agent").add_edge("agent", "again").add_edge("again", END)
    return g.compile(budget=budget)


def test_a_streamed_reply_reaches_the_graphs_messages_stream_with_one_id() -> None:
    model = ScriptedChatModel(["Hello from the graph.", "Second reply."])
    app = graph_with(model, use_stream=True)
    parts = list(app.stream({"messages": [HumanMessage("hi")]}, mode=["messages", "values"]))
    tokens = [p for p in parts if p.mode == "messages" and p.node == "agent"]
    assert all(isinstance(p.data, AIMessageChunk) for p in tokens)
    assert "".join(p.data.text for p in tokens) == "Hello from the graph."
    ids = {p.data.id for p in tokens}
    assert len(ids) == 1 and None not in ids  # an id given up front, shared by every chunk
    final = parts[-1].data.messages
    assert final[1].id in ids
    assert [m.text for m in final] == ["hi", "Hello from the graph.", "Second reply."]


def test_invoke_inside_a_graph_streams_when_the_caller_listens_to_messages() -> None:
    model = ScriptedChatModel(["A b.", "C."])
    app = graph_with(model)
    parts = [p for p in app.stream({"messages": ["hi"]}, mode="messages") if p.data.text]
    assert [(p.node, p.data.text) for p in parts] == [
        ("agent", "A "),
        ("agent", "b."),
        ("again", "C."),
    ]
    assert [r.stream for r in model.requests] == [True, True]


def test_a_streaming_model_streams_under_invoke_too() -> None:
    app = graph_with(ScriptedChatModel(["One two three.", "Four."], streaming=True))
    parts = [p for p in app.stream({"messages": ["hi"]}, mode="messages") if p.node == "agent"]
    assert [p.data.text for p in parts if p.data.text] == ["One ", "two ", "three."]


def test_model_calls_are_charged_to_the_runs_budget_before_they_are_made() -> None:
    model = ScriptedChatModel(["one", "two"])
    app = graph_with(model, budget=Budget(max_model_calls=1))
    with pytest.raises(BudgetExceededError, match="max_model_calls"):
        app.invoke({"messages": ["hi"]})
    assert model.calls == 1  # the refused call never reached the model


def test_tokens_are_recorded_against_the_budget() -> None:
    model = ScriptedChatModel(["one two three four five", "six"])
    app = graph_with(model, budget=Budget(max_tokens=5))
    with pytest.raises(BudgetExceededError, match="max_tokens"):
        app.invoke({"messages": ["hi"]})
    assert model.calls == 1


def test_an_http_model_reports_to_a_graph_too(server: LoopbackServer) -> None:
    server.handler = lambda request: (
        Reply(pieces=[STREAM]) if request.json.get("stream") else Reply.json(completion("Hi!"))
    )

    async def main() -> list[Any]:
        async with model_for(server) as model:

            async def agent(state: MessagesState) -> dict[str, Any]:
                chunks = [chunk async for chunk in model.astream(state.messages)]
                return {"messages": [sum(chunks).to_message()]}

            g = StateGraph(MessagesState)
            g.add_node("agent", agent)
            g.add_edge(START, "agent").add_edge("agent", END)
            app = g.compile()
            return [p async for p in app.astream({"messages": ["hi"]}, mode="messages")]

    parts = asyncio.run(main())
    assert "".join(p.data.text for p in parts) == "Grüße 🌍, let me check."
    assert {p.data.id for p in parts} == {"chatcmpl-1"}


def test_the_scripted_model_is_deterministic() -> None:
    script = [{"content": "x", "tool_calls": [{"name": "f", "args": {}}]}]
    first = ScriptedChatModel(script).invoke("hi")
    assert first == ScriptedChatModel(script).invoke("hi")
    assert first.content_blocks == [TextPart(text="x"), *first.content_blocks[1:]]


def test_what_is_sent_is_coerced_and_a_remove_message_refused() -> None:
    model = ScriptedChatModel(["ok", "ok"])

    model.invoke(["hi", ("ai", "hello"), HumanMessage("again", id="h2")])
    sent = model.requests[0].messages
    assert [(m.type, m.text) for m in sent] == [
        ("human", "hi"),
        ("ai", "hello"),
        ("human", "again"),
    ]
    assert sent[2].id == "h2"
    with pytest.raises(InvalidMessageError, match=r"RemoveMessage\('h2'\) cannot be sent"):
        model.invoke([HumanMessage("x"), RemoveMessage(id="h2")])
