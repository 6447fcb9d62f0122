"""OpenTelemetry spans of runs, node steps, model calls and tool calls, read back from the SDK.

Every test runs a real graph under `instrument()` with the SDK's
TracerProvider and in-memory exporter, and checks the tree the spans form
and the attributes they carry.
"""

from __future__ import annotations

import asyncio
import json
import operator
import threading
from typing import Annotated, Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import Field

import flowgraph._hooks as hooks
from flowgraph import (
    END,
    START,
    AIMessage,
    Command,
    HumanMessage,
    InjectedToolCallId,
    MessagesState,
    ModelNode,
    RetryPolicy,
    ScriptedChatModel,
    Send,
    StateGraph,
    SystemMessage,
    ToolMessage,
    ToolNode,
    create_react_agent,
    interrupt,
    tool,
    tools_condition,
)
from flowgraph.checkpoint import MemoryCheckpointer
from flowgraph.errors import ModelError
from flowgraph.integrations.opentelemetry import instrument, is_instrumented, uninstrument

from ._spans import Spans


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool
def broken(city: str) -> str:
    """A tool that fails."""
    raise ConnectionError(f"weather service down for {city}")


@tool
def refuses(city: str) -> ToolMessage:
    """A tool that answers with an error message of its own (as an MCP server's isError)."""
    return ToolMessage(f"no data for {city}", tool_call_id="", status="error")


def weather_agent(tools: list[Any] | None = None, **kwargs: Any) -> Any:
    model = ScriptedChatModel(
        [
            {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]},
            "It is sunny in Paris.",
        ]
    )
    return create_react_agent(
        model, tools or [get_weather], checkpointer=MemoryCheckpointer(), **kwargs
    )


ASK = {"messages": [HumanMessage("Weather in Paris?")]}
WEATHER_TREE = [
    "invoke_agent react_agent",
    "  agent",
    "    chat scripted",
    "  tools",
    "    execute_tool get_weather",
    "  agent",
    "    chat scripted",
]
"""The spans of `weather_agent()` answering ASK, children under their parent."""


# -- the tree -----------------------------------------------------------------------


def test_a_react_run_is_one_trace_of_run_nodes_model_and_tool_calls(spans: Spans) -> None:
    weather_agent().invoke(ASK, thread_id="t1")

    assert spans.tree() == WEATHER_TREE
    found = spans.all()
    assert len({s.context.trace_id for s in found if s.context is not None}) == 1
    kinds = {s.name: s.kind for s in found}
    assert kinds["chat scripted"] is SpanKind.CLIENT
    assert kinds["invoke_agent react_agent"] is SpanKind.INTERNAL
    assert kinds["execute_tool get_weather"] is SpanKind.INTERNAL
    assert {s.status.status_code for s in found} == {StatusCode.UNSET}


def test_the_run_nests_under_the_callers_own_span(spans: Spans) -> None:
    tracer = spans.provider.get_tracer("the-app")
    with tracer.start_as_current_span("POST /chat"):
        weather_agent().invoke(ASK, thread_id="t1")
        asyncio.run(weather_agent().ainvoke(ASK, thread_id="t2"))

    assert spans.tree()[:2] == ["POST /chat", "  invoke_agent react_agent"]
    runs = spans.named("invoke_agent react_agent")
    request = spans.one("POST /chat")
    assert [spans.parent_of(r) for r in runs] == [request, request]


def test_streaming_runs_are_traced_the_same(spans: Spans) -> None:
    parts = list(weather_agent().stream(ASK, thread_id="t1", mode="updates"))

    assert [p.node for p in parts] == ["agent", "tools", "agent"]
    assert spans.tree() == WEATHER_TREE


# -- attributes ---------------------------------------------------------------------


def test_run_node_model_and_tool_spans_carry_the_genai_and_flowgraph_attributes(
    spans: Spans,
) -> None:
    app = weather_agent()
    app.invoke(ASK, thread_id="t1")

    history = list(app.get_state_history("t1"))  # newest first: steps 3, 2, 1, 0
    by_step = {snapshot.step: snapshot.checkpoint_id for snapshot in history}
    replies = [m for m in history[0].values.messages if isinstance(m, AIMessage)]
    usages = [r.usage for r in replies if r.usage is not None]
    assert len(usages) == 2
    run = spans.one("invoke_agent react_agent")
    assert run.attributes is not None
    assert dict(run.attributes) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "react_agent",
        "gen_ai.conversation.id": "t1",
        "flowgraph.run_id": history[0].metadata["run_id"],
        "flowgraph.checkpoint_id": by_step[3],
        "flowgraph.step": 3,
        "gen_ai.usage.input_tokens": usages[0].input_tokens + usages[1].input_tokens,
        "gen_ai.usage.output_tokens": usages[0].output_tokens + usages[1].output_tokens,
        "flowgraph.model_calls": 2,
        "flowgraph.tool_calls": 1,
    }

    nodes = [s for s in spans.all() if s.name in ("agent", "tools")]
    assert [dict(s.attributes or {}) for s in nodes] == [
        {
            "flowgraph.node": name,
            "flowgraph.step": step,
            "flowgraph.task": 0,
            "flowgraph.attempt": 1,
            # the checkpoint whose state the step reads: fork from it to run the step again
            "flowgraph.checkpoint_id": by_step[step - 1],
            "flowgraph.writes": ("messages",),
        }
        for name, step in [("agent", 1), ("tools", 2), ("agent", 3)]
    ]

    first, second = spans.named("chat scripted")
    assert dict(first.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": "scripted",
        "gen_ai.conversation.id": "t1",
        "gen_ai.response.model": "scripted",
        "gen_ai.response.id": replies[0].id,
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": usages[0].input_tokens,
        "gen_ai.usage.output_tokens": usages[0].output_tokens,
    }
    assert (second.attributes or {})["gen_ai.response.finish_reasons"] == ("stop",)

    call = spans.one("execute_tool get_weather")
    assert dict(call.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_1_0",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "The weather in a city.",
    }


def test_without_capture_content_no_message_text_is_recorded(spans: Spans) -> None:
    weather_agent().invoke(ASK, thread_id="t1")

    text = json.dumps([dict(s.attributes or {}) for s in spans.all()])
    assert "Paris" not in text
    assert "sunny" not in text
    assert all(not s.events for s in spans.all())


def test_capture_content_records_messages_and_tool_io_as_the_conventions_say(
    spans_with_content: Spans,
) -> None:
    spans = spans_with_content
    weather_agent(system="You report the weather.").invoke(ASK, thread_id="t1")

    first, second = spans.named("chat scripted")
    assert json.loads(str((first.attributes or {})["gen_ai.input.messages"])) == [
        {"role": "system", "parts": [{"type": "text", "content": "You report the weather."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    ]
    assert json.loads(str((first.attributes or {})["gen_ai.output.messages"])) == [
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "id": "call_1_0",
                    "name": "get_weather",
                    "arguments": {"city": "Paris"},
                }
            ],
            "finish_reason": "tool_calls",
        }
    ]
    sent = json.loads(str((second.attributes or {})["gen_ai.input.messages"]))
    assert sent[-1] == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call_1_0", "response": "sunny in Paris"}],
        "name": "get_weather",
    }
    assert json.loads(str((second.attributes or {})["gen_ai.output.messages"])) == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "It is sunny in Paris."}],
            "finish_reason": "stop",
        }
    ]
    call = spans.one("execute_tool get_weather").attributes or {}
    assert json.loads(str(call["gen_ai.tool.call.arguments"])) == {"city": "Paris"}
    assert call["gen_ai.tool.call.result"] == "sunny in Paris"


# -- errors -------------------------------------------------------------------------


def _exception_events(span: Any) -> list[dict[str, Any]]:
    return [dict(e.attributes or {}) for e in span.events if e.name == "exception"]


def test_a_failing_node_marks_its_span_and_the_runs_error_with_the_exception(
    spans: Spans,
) -> None:
    def explode(state: MessagesState) -> dict[str, Any]:
        raise ValueError("the ledger is locked")

    g = StateGraph(MessagesState)
    g.add_node("explode", explode)
    g.add_edge(START, "explode")
    g.add_edge("explode", END)
    with pytest.raises(ValueError, match="ledger"):
        g.compile(name="ledger").invoke(ASK)

    node, run = spans.one("explode"), spans.one("invoke_agent ledger")
    for span in (node, run):
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "ValueError: the ledger is locked"
        assert (span.attributes or {})["error.type"] == "ValueError"
        (event,) = _exception_events(span)
        assert event["exception.type"] == "ValueError"
        assert event["exception.message"] == "the ledger is locked"


def test_each_retried_attempt_is_its_own_span(spans: Spans) -> None:
    attempts: list[int] = []

    def flaky(state: MessagesState) -> dict[str, Any]:
        attempts.append(1)
        if len(attempts) < 3:
            raise TimeoutError("busy")
        return {"messages": [AIMessage("done")]}

    g = StateGraph(MessagesState)
    g.add_node("flaky", flaky, retry=RetryPolicy(max_attempts=3, initial_interval=0.001))
    g.add_edge(START, "flaky")
    g.add_edge("flaky", END)
    g.compile(name="retrying").invoke(ASK)

    tries = spans.named("flaky")
    assert [(s.attributes or {})["flowgraph.attempt"] for s in tries] == [1, 2, 3]
    assert [s.status.status_code for s in tries] == [
        StatusCode.ERROR,
        StatusCode.ERROR,
        StatusCode.UNSET,
    ]
    assert spans.tree() == ["invoke_agent retrying", "  flaky", "  flaky", "  flaky"]


def test_a_failing_model_call_is_an_error_span_under_its_node(spans: Spans) -> None:
    model = ScriptedChatModel([ModelError("the provider is overloaded", status_code=529)])
    app = create_react_agent(model, [get_weather])
    with pytest.raises(ModelError):
        app.invoke(ASK)

    chat = spans.one("chat scripted")
    assert spans.parent_of(chat) is spans.one("agent")
    assert chat.status.status_code is StatusCode.ERROR
    assert (chat.attributes or {})["error.type"] == "529"
    assert _exception_events(chat)[0]["exception.type"] == "flowgraph.errors.ModelError"


def test_a_failing_tool_is_an_error_span_while_the_run_goes_on(spans: Spans) -> None:
    model = ScriptedChatModel(
        [{"tool_calls": [{"name": "broken", "args": {"city": "Oslo"}}]}, "Sorry, no data."]
    )
    create_react_agent(model, [broken]).invoke(ASK)

    call = spans.one("execute_tool broken")
    assert call.status.status_code is StatusCode.ERROR
    assert (call.attributes or {})["error.type"] == "ConnectionError"
    (event,) = _exception_events(call)
    assert event["exception.message"] == "weather service down for Oslo"
    # the model read the error and answered: the node and the run succeeded
    assert spans.one("tools").status.status_code is StatusCode.UNSET
    assert spans.one("invoke_agent react_agent").status.status_code is StatusCode.UNSET


def test_unknown_tools_and_error_replies_are_error_spans_too(spans: Spans) -> None:
    model = ScriptedChatModel(
        [
            {
                "tool_calls": [
                    {"name": "teleport", "args": {}},
                    {"name": "refuses", "args": {"city": "Lima"}},
                ]
            },
            "Nothing found.",
        ]
    )
    create_react_agent(model, [refuses]).invoke(ASK)

    unknown, refused = spans.one("execute_tool teleport"), spans.one("execute_tool refuses")
    assert unknown.status.status_code is StatusCode.ERROR
    assert "`teleport` is not a tool" in (unknown.status.description or "")
    assert refused.status.status_code is StatusCode.ERROR
    assert refused.status.description == "no data for Lima"
    assert (refused.attributes or {})["error.type"] == "tool_error"


def test_an_interrupt_is_a_pause_not_an_error(spans: Spans) -> None:
    def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt("Send the report?")
        return {"messages": [AIMessage(f"answer: {answer}")]}

    g = StateGraph(MessagesState)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    app = g.compile(checkpointer=MemoryCheckpointer(), name="review")
    app.invoke(ASK, thread_id="t1")
    paused = app.get_state("t1").interrupts

    node, run = spans.one("ask"), spans.one("invoke_agent review")
    assert node.status.status_code is StatusCode.UNSET
    assert (node.attributes or {})["flowgraph.interrupted"] is True
    assert run.status.status_code is StatusCode.UNSET
    assert (run.attributes or {})["flowgraph.interrupt_ids"] == (paused[0].id,)

    spans.clear()
    app.invoke(Command(resume="yes"), thread_id="t1")
    resumed = spans.one("invoke_agent review")
    assert "flowgraph.interrupted" not in (resumed.attributes or {})
    assert "flowgraph.interrupted" not in (spans.one("ask").attributes or {})


# -- context across threads, Send branches and subgraphs ------------------------------


class Fanout(MessagesState):
    topics: list[str] = Field(default_factory=list)
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)


def _summariser(model: ScriptedChatModel, threads: list[str]) -> Any:
    def summarise(topic: str) -> dict[str, Any]:
        threads.append(threading.current_thread().name)
        reply = model.invoke([HumanMessage(f"Summarise {topic}")])
        return {"notes": [reply.text]}

    return summarise


def test_send_branches_and_sync_nodes_in_worker_threads_keep_their_parent(
    spans: Spans,
) -> None:
    model = ScriptedChatModel(lambda messages: f"note on {messages[-1].text.split()[-1]}")
    threads: list[str] = []
    g = StateGraph(Fanout)
    g.add_node("summarise", _summariser(model, threads))
    g.add_conditional_edges(START, lambda s: [Send("summarise", t) for t in s.topics])
    g.add_edge("summarise", END)
    out = g.compile(name="fanout").invoke({"topics": ["a", "b", "c"]})

    assert sorted(out.notes) == ["note on a", "note on b", "note on c"]
    assert set(threads) == {"flowgraph-node"}  # the three ran in worker threads
    assert spans.tree() == ["invoke_agent fanout"] + ["  summarise", "    chat scripted"] * 3
    for chat in spans.named("chat scripted"):
        assert spans.parent_of(chat) in spans.named("summarise")
    assert sorted((s.attributes or {})["flowgraph.task"] for s in spans.named("summarise")) == [
        0,
        1,
        2,
    ]


def test_a_subgraph_nests_its_nodes_under_the_node_that_runs_it(spans: Spans) -> None:
    inner = StateGraph(MessagesState)
    inner.add_node("draft", ModelNode(ScriptedChatModel(["a draft"])))
    inner.add_edge(START, "draft")
    inner.add_edge("draft", END)
    outer = StateGraph(MessagesState)
    outer.add_node("writer", inner.compile(name="writer"))
    outer.add_edge(START, "writer")
    outer.add_edge("writer", END)
    app = outer.compile(checkpointer=MemoryCheckpointer(), name="desk")
    asyncio.run(app.ainvoke(ASK, thread_id="t9"))

    assert spans.tree() == [
        "invoke_agent desk",
        "  writer",
        "    draft",
        "      chat scripted",
    ]
    assert (spans.one("chat scripted").attributes or {})["gen_ai.conversation.id"] == "t9"


def test_a_graph_invoked_inside_a_sync_node_is_a_child_run(spans: Spans) -> None:
    helper = weather_agent()

    def delegate(state: MessagesState) -> dict[str, Any]:
        done = helper.invoke(ASK, thread_id="helper-thread")
        return {"messages": [done.messages[-1]]}

    g = StateGraph(MessagesState)
    g.add_node("delegate", delegate)
    g.add_edge(START, "delegate")
    g.add_edge("delegate", END)
    g.compile(checkpointer=MemoryCheckpointer(), name="boss").invoke(ASK, thread_id="boss-thread")

    assert spans.tree()[:4] == [
        "invoke_agent boss",
        "  delegate",
        "    invoke_agent react_agent",
        "      agent",
    ]
    chats = spans.named("chat scripted")
    assert {(c.attributes or {})["gen_ai.conversation.id"] for c in chats} == {"helper-thread"}


# -- switching on and off --------------------------------------------------------------


def test_uninstrument_stops_the_spans_and_clears_the_hook(spans: Spans) -> None:
    assert is_instrumented()
    uninstrument()
    assert hooks.observer is None
    assert not is_instrumented()
    weather_agent().invoke(ASK, thread_id="t1")
    assert spans.all() == []

    instrument(spans.provider)
    weather_agent().invoke(ASK, thread_id="t2")
    assert len(spans.named("invoke_agent react_agent")) == 1


def test_a_sampled_out_trace_records_nothing(spans: Spans) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    instrument(TracerProvider(sampler=ALWAYS_OFF), capture_content=True)
    out = weather_agent().invoke(ASK, thread_id="t1")
    assert out.messages[-1].text == "It is sunny in Paris."
    assert spans.all() == []
    assert trace.get_current_span() is trace.INVALID_SPAN  # every context was restored


def test_a_stream_left_early_still_ends_its_span(spans: Spans) -> None:
    model = ScriptedChatModel(["one two three four"])
    chunks = model.stream([SystemMessage("count"), HumanMessage("go")])
    first = next(chunks)
    chunks.close()

    assert first.text == "one "
    chat = spans.one("chat scripted")
    assert (chat.attributes or {})["flowgraph.stream_closed"] is True
    assert chat.status.status_code is StatusCode.UNSET


def test_a_cancelled_node_ends_its_spans_as_errors(spans: Spans) -> None:
    started = asyncio.Event()

    async def slow(state: MessagesState) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(30)
        return {}

    g = StateGraph(MessagesState)
    g.add_node("slow", slow)
    g.add_edge(START, "slow")
    g.add_edge("slow", END)
    app = g.compile(name="slowpoke")

    async def main() -> None:
        run = asyncio.create_task(app.ainvoke(ASK))
        await started.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(main())
    for name in ("slow", "invoke_agent slowpoke"):
        span = spans.one(name)
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {})["error.type"] == "asyncio.exceptions.CancelledError"


def test_tools_condition_route_and_tool_node_outside_a_graph_are_not_runs(spans: Spans) -> None:
    message = AIMessage(
        "", tool_calls=[{"id": "c1", "name": "get_weather", "args": {"city": "Rome"}}]
    )
    assert tools_condition({"messages": [message]}) == "tools"
    out = ToolNode([get_weather]).invoke({"messages": [message]})

    assert out["messages"][0].text == "sunny in Rome"
    assert spans.tree() == ["execute_tool get_weather"]


def test_no_observer_is_set_until_instrument() -> None:
    assert hooks.observer is None


def test_a_tool_returning_a_command_ends_its_span_with_the_call_reply(
    spans_with_content: Spans,
) -> None:
    @tool
    def sign_in(name: str, call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Sign the user in."""
        return Command(update={"messages": [ToolMessage(f"hi {name}", tool_call_id=call_id)]})

    model = ScriptedChatModel(
        [{"tool_calls": [{"name": "sign_in", "args": {"name": "ada"}}]}, "ok"]
    )
    out = create_react_agent(model, [sign_in]).invoke({"messages": [HumanMessage("I'm Ada")]})

    assert [m.text for m in out.messages[2:]] == ["hi ada", "ok"]
    span = spans_with_content.one("execute_tool sign_in")
    assert (span.attributes or {})["gen_ai.tool.call.result"] == "hi ada"
    assert span.status.is_ok
