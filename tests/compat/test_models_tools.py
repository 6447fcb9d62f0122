"""LangChain's model and tool habits (issue 18, item 2).

`llm.bind_tools(tools)` called inside a node, a plain function as a tool
everywhere a tool goes, and a tool call read as a dict. Each program runs
under flowgraph and LangGraph with a scripted model on both sides.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from flowgraph import (
    START,
    AIMessage,
    AIMessageChunk,
    MessagesState,
    ModelNode,
    ScriptedChatModel,
    StateGraph,
    ToolCall,
    ToolNode,
    tools_condition,
)
from tests.compat._libs import Lib


def get_weather(city: str) -> str:
    """Look up today's weather in a city."""
    return f"sunny in {city}"


def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def replies(lib: Lib) -> list[Any]:
    """The model asks for both tools at once, then answers."""
    calls = [
        {"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_w"},
        {"name": "add", "args": {"a": 2, "b": 3}, "id": "call_a"},
    ]
    return [lib.AIMessage("", tool_calls=calls), lib.AIMessage("Sunny, and 5.")]


def transcript(state: Any) -> list[tuple[str, str]]:
    # `.text`, not `.content`: a flowgraph AIMessage keeps its tool calls among its content
    # parts (the README's table says so); LangChain's messages have `.text` too
    return [(m.type, m.text) for m in state["messages"]]


EXPECTED = [
    ("human", "Weather in Oslo, and 2+3?"),
    ("ai", ""),
    ("tool", "sunny in Oslo"),
    ("tool", "5"),
    ("ai", "Sunny, and 5."),
]


def test_bind_tools_inside_a_node_with_plain_functions(lib: Lib) -> None:
    model = lib.scripted_model(replies(lib))
    llm_with_tools = model.bind_tools([get_weather, add])

    def chatbot(state: Any) -> dict[str, Any]:
        return {"messages": [llm_with_tools.invoke(state["messages"])]}

    graph = lib.StateGraph(lib.MessagesState)
    graph.add_node("chatbot", chatbot)
    graph.add_node("tools", lib.ToolNode([get_weather, add]))
    graph.add_edge(lib.START, "chatbot")
    graph.add_conditional_edges("chatbot", lib.tools_condition)
    graph.add_edge("tools", "chatbot")
    state = graph.compile().invoke({"messages": [lib.HumanMessage("Weather in Oslo, and 2+3?")]})
    assert transcript(state) == EXPECTED
    assert model.sent_tools == [["get_weather", "add"], ["get_weather", "add"]]


def test_create_react_agent_with_plain_functions(lib: Lib) -> None:
    model = lib.scripted_model(replies(lib))
    with warnings.catch_warnings():  # LangGraph 1.x: moved to langchain.agents
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = lib.create_react_agent(model, [get_weather, add])
    state = agent.invoke({"messages": [lib.HumanMessage("Weather in Oslo, and 2+3?")]})
    assert transcript(state) == EXPECTED
    assert model.sent_tools[0] == ["get_weather", "add"]


def test_model_node_and_tool_node_take_plain_functions() -> None:
    model = ScriptedChatModel(replies(_flowgraph()))
    graph = StateGraph(MessagesState)
    graph.add_node("agent", ModelNode(model, tools=[get_weather, add]))
    graph.add_node("tools", ToolNode([get_weather, add]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    state = graph.compile().invoke({"messages": [("user", "Weather in Oslo, and 2+3?")]})
    assert transcript(state) == EXPECTED
    schema = model.requests[0].tools[1].parameters
    assert schema["properties"] == {"a": {"type": "integer"}, "b": {"type": "integer"}}


def test_a_bound_models_tokens_reach_the_runs_message_stream() -> None:
    model = ScriptedChatModel(["It is sunny in Oslo."], streaming=True)
    llm = model.bind_tools([get_weather])

    def chatbot(state: MessagesState) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("chatbot", chatbot)
    graph.add_edge(START, "chatbot")
    parts = list(graph.compile().stream({"messages": [("user", "hi")]}, mode="messages"))
    chunks = [p.data for p in parts]
    assert {p.node for p in parts} == {"chatbot"} and len(chunks) > 1
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert sum(chunks[1:], chunks[0]).text == "It is sunny in Oslo."
    assert [t.name for t in model.requests[0].tools] == ["get_weather"]


def test_a_tool_call_reads_as_a_dict(lib: Lib) -> None:
    seen: list[Any] = []

    def route(state: Any) -> dict[str, Any]:
        call = state["messages"][-1].tool_calls[0]
        seen.append((call["name"], call["args"], call["id"], call.get("type"), "args" in call))
        reply = lib.ToolMessage(f"ran {call['name']}", tool_call_id=call["id"])
        return {"messages": [reply]}

    graph = lib.StateGraph(lib.MessagesState)
    graph.add_node("route", route)
    graph.add_edge(lib.START, "route")
    asked = lib.AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1}, "id": "c9"}])
    state = graph.compile().invoke({"messages": [asked]})
    assert seen == [("add", {"a": 1}, "c9", "tool_call", True)]
    assert state["messages"][-1].tool_call_id == "c9"


def test_a_tool_call_is_still_a_pydantic_model() -> None:
    call = ToolCall(id="c1", name="add", args={"a": 1})
    assert (call.id, call.name, call.args) == ("c1", "add", {"a": 1})
    assert dict(call) == {"name": "add", "args": {"a": 1}, "id": "c1", "type": "tool_call"}
    assert call.model_dump() == {"id": "c1", "name": "add", "args": {"a": 1}}
    assert ToolCall.model_validate(call.model_dump()) == call
    assert AIMessage("", tool_calls=[dict(call)]).tool_calls == [call]
    assert list(call.keys()) == ["name", "args", "id", "type"]
    assert call.get("missing", "fallback") == "fallback"
    with pytest.raises(KeyError, match="missing"):
        call["missing"]


def _flowgraph() -> Lib:
    from tests.compat._libs import load

    return load("flowgraph")
