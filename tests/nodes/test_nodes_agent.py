"""create_react_agent and the Agent facade: loops, threads, checkpointers, the ReAct timeline."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from flowgraph import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel
from flowgraph.nodes import Agent, create_react_agent, tool


@tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: The city, e.g. "Paris".
    """
    if city == "Tokyo":
        raise TimeoutError("weather service did not answer in 5s")
    return f"{city}: 18°C, sunny"


@tool
def get_time(city: str) -> str:
    """Local time in a city."""
    return f"{city}: 14:05"


def types(messages: list[Any]) -> list[str]:
    return [m.type for m in messages]


# ------------------------------------------------------------------ create_react_agent


def test_agent_loops_through_tools_to_the_final_answer() -> None:
    model = ScriptedChatModel(
        [
            {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]},
            {"tool_calls": [{"name": "get_time", "args": {"city": "Paris"}}]},
            "Sunny, 18°C, and it is 14:05 in Paris.",
        ]
    )
    out = create_react_agent(model, [get_weather, get_time]).invoke(
        {"messages": [HumanMessage("Paris?")]}
    )
    assert types(out.messages) == ["human", "ai", "tool", "ai", "tool", "ai"]
    assert [m.text for m in out.messages if m.type == "tool"] == [
        "Paris: 18°C, sunny",
        "Paris: 14:05",
    ]
    assert out.messages[-1].text == "Sunny, 18°C, and it is 14:05 in Paris."
    assert model.calls == 3
    # the last call saw the whole loop
    assert types(model.requests[2].messages) == ["human", "ai", "tool", "ai", "tool"]


def test_agent_without_tools_is_a_single_model_call() -> None:
    model = ScriptedChatModel(["Hello!", "unused"])
    app = create_react_agent(model, system="Be nice.")
    out = app.invoke({"messages": [HumanMessage("hi")]})
    assert types(out.messages) == ["human", "ai"]
    assert out.messages[-1].text == "Hello!"
    assert model.calls == 1
    assert model.requests[0].tools == ()
    assert [(m.type, m.text) for m in model.requests[0].messages] == [
        ("system", "Be nice."),
        ("human", "hi"),
    ]


def test_a_named_agent_names_its_replies() -> None:
    # as LangGraph's create_react_agent(name=...): every reply of the model carries the name
    for prompt in (None, SystemMessage("Be brief.")):
        model = ScriptedChatModel(
            [{"tool_calls": [{"name": "get_time", "args": {"city": "Oslo"}}]}, "14:05 in Oslo."]
        )
        app = create_react_agent(model, [get_time], prompt=prompt, name="clock")
        out = app.invoke({"messages": [HumanMessage("Time in Oslo?", name="User_A")]})
        assert [(m.type, m.name) for m in out.messages] == [
            ("human", "User_A"),
            ("ai", "clock"),
            ("tool", "get_time"),
            ("ai", "clock"),
        ]
    unnamed = create_react_agent(ScriptedChatModel(["hi"]))
    assert unnamed.invoke({"messages": [HumanMessage("hi")]}).messages[-1].name is None


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_second_invoke_on_the_same_thread_continues(store: str, tmp_path: Path) -> None:
    checkpointer: Any = (
        MemoryCheckpointer() if store == "memory" else SQLiteCheckpointer(tmp_path / "c.db")
    )
    model = ScriptedChatModel(
        [
            {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]},
            "It is sunny in Paris.",
            "Yes, take sunglasses.",
        ]
    )
    app = create_react_agent(model, [get_weather], checkpointer=checkpointer)
    app.invoke({"messages": [HumanMessage("Weather in Paris?")]}, thread_id="t")
    out = app.invoke({"messages": [HumanMessage("Sunglasses?")]}, thread_id="t")
    assert types(out.messages) == ["human", "ai", "tool", "ai", "human", "ai"]
    assert out.messages[-1].text == "Yes, take sunglasses."
    assert [(m.type, m.text) for m in model.requests[2].messages] == [
        ("human", "Weather in Paris?"),
        ("ai", ""),
        ("tool", "Paris: 18°C, sunny"),
        ("ai", "It is sunny in Paris."),
        ("human", "Sunglasses?"),
    ]
    assert len(app.get_state("t").values.messages) == 6


def test_react_timeline_message_by_message() -> None:
    model = ScriptedChatModel(
        [
            {
                "tool_calls": [
                    {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_paris"},
                    {"name": "get_weather", "args": {"city": "Tokyo"}, "id": "call_tokyo"},
                ]
            },
            "Paris: 18°C and sunny. Tokyo's weather is unavailable right now.",
        ]
    )
    app = create_react_agent(
        model,
        [get_weather],
        system="You are a weather assistant.",
        checkpointer=MemoryCheckpointer(),
    )
    out = app.invoke(
        {
            "messages": [
                SystemMessage("You are a weather assistant.", id="sys-1"),
                HumanMessage("Weather in Paris and Tokyo?", name="User_A"),
            ]
        },
        thread_id="t1",
    )
    timeline = out.messages
    assert [type(m) for m in timeline] == [
        SystemMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
        ToolMessage,
        AIMessage,
    ]
    system, human, call, paris, tokyo, answer = timeline
    assert (system.id, system.text) == ("sys-1", "You are a weather assistant.")
    assert (human.type, human.name, human.text) == (
        "human",
        "User_A",
        "Weather in Paris and Tokyo?",
    )
    assert call.text == ""
    assert call.tool_calls == [
        ToolCall(id="call_paris", name="get_weather", args={"city": "Paris"}),
        ToolCall(id="call_tokyo", name="get_weather", args={"city": "Tokyo"}),
    ]
    assert (paris.tool_call_id, paris.name, paris.status, paris.text) == (
        "call_paris",
        "get_weather",
        "success",
        "Paris: 18°C, sunny",
    )
    assert (tokyo.tool_call_id, tokyo.name, tokyo.status) == ("call_tokyo", "get_weather", "error")
    assert tokyo.text == (
        "Error: tool `get_weather` raised TimeoutError: weather service did not answer in 5s"
    )
    assert answer.text == "Paris: 18°C and sunny. Tokyo's weather is unavailable right now."
    assert not answer.has_tool_calls
    ids = [m.id for m in timeline]
    assert None not in ids and len(set(ids)) == len(ids)

    # the model saw the named user and, on its second call, both results in call order
    first, second = model.requests
    assert [(m.type, m.name) for m in first.messages] == [("system", None), ("human", "User_A")]
    assert [m.type for m in second.messages] == ["system", "human", "ai", "tool", "tool"]
    assert [m.tool_call_id for m in second.messages[3:]] == ["call_paris", "call_tokyo"]

    # one checkpoint per step, newest first: input, agent, tools (both calls), agent;
    # and, as in LangGraph, the checkpoint before the input (no step ran into it)
    history = list(app.get_state_history("t1"))
    assert [(s.step, s.metadata["source"], s.metadata.get("nodes"), s.next) for s in history] == [
        (3, "loop", ["agent"], ()),
        (2, "loop", ["tools"], ("agent",)),
        (1, "loop", ["agent"], ("tools",)),
        (0, "input", ["__start__"], ("agent",)),
        (-1, "input", None, ("__start__",)),
    ]
    assert history[-1].values.messages == []
    assert history[0].metadata["usage"]["model_calls"] == 2
    assert history[0].metadata["usage"]["tool_calls"] == 2


# ------------------------------------------------------------------ Agent facade


def script() -> ScriptedChatModel:
    return ScriptedChatModel(
        [
            {"tool_calls": [{"name": "get_time", "args": {"city": "Rome"}}]},
            "It is 14:05 in Rome.",
            "You asked about Rome.",
        ]
    )


def test_call_returns_the_final_ai_message() -> None:
    agent = Agent(script(), [get_time])
    reply = agent.call("What time is it in Rome?", thread_id="t")
    assert isinstance(reply, AIMessage)
    assert reply.text == "It is 14:05 in Rome."
    assert not reply.has_tool_calls


def test_second_call_on_the_same_thread_continues() -> None:
    model = script()
    agent = Agent(model, [get_time])
    agent.call("What time is it in Rome?", thread_id="t")
    reply = agent.call("What did I ask?", thread_id="t")
    assert reply.text == "You asked about Rome."
    assert [(m.type, m.text) for m in model.requests[2].messages] == [
        ("human", "What time is it in Rome?"),
        ("ai", ""),
        ("tool", "Rome: 14:05"),
        ("ai", "It is 14:05 in Rome."),
        ("human", "What did I ask?"),
    ]


def test_different_threads_are_independent() -> None:
    model = ScriptedChatModel(lambda messages: f"{len(messages)} messages seen")
    agent = Agent(model)
    assert agent.call("one", thread_id="a").text == "1 messages seen"
    assert agent.call("two", thread_id="a").text == "3 messages seen"
    assert agent.call("three", thread_id="b").text == "1 messages seen"
    assert [m.text for m in model.requests[2].messages] == ["three"]


def test_call_with_a_human_message_and_with_a_list() -> None:
    model = ScriptedChatModel(["first", "second"])
    agent = Agent(model, system="Be brief.")
    assert agent.call(HumanMessage("hi", name="User_A"), thread_id="t").text == "first"
    assert model.requests[0].messages[1].name == "User_A"
    reply = agent.call(
        [HumanMessage("from A", name="User_A"), HumanMessage("from B", name="User_B")],
        thread_id="t",
    )
    assert reply.text == "second"
    assert [(m.type, m.name, m.text) for m in model.requests[1].messages] == [
        ("system", None, "Be brief."),
        ("human", "User_A", "hi"),
        ("ai", None, "first"),
        ("human", "User_A", "from A"),
        ("human", "User_B", "from B"),
    ]


def test_acall_under_asyncio_run() -> None:
    model = script()
    agent = Agent(model, [get_time])

    async def main() -> tuple[AIMessage, AIMessage]:
        first = await agent.acall("What time is it in Rome?", thread_id="t")
        second = await agent.acall("What did I ask?", thread_id="t")
        return first, second

    first, second = asyncio.run(main())
    assert (first.text, second.text) == ("It is 14:05 in Rome.", "You asked about Rome.")
    assert model.calls == 3
    assert len(model.requests[2].messages) == 5
