"""The ReAct timeline, run for real: model node, ToolNode, tools_condition, checkpoints.

System prompt, a named user, a model turn asking for two tools in
parallel, one result with an artifact and one error, and the final answer:
checked message by message, through the checkpoint history, and against
what the model was sent on each call. The model is ScriptedChatModel; the
model node is a few lines standing in for ModelNode.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from flowgraph import (
    END,
    START,
    AIMessage,
    HumanMessage,
    MessagesState,
    StateGraph,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
)
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.models import ScriptedChatModel
from flowgraph.nodes import ToolNode, tool, tools_condition

ARTIFACT = {"city": "Paris", "temp_c": 18.5, "hourly": [17, 18, 19], "source": "meteo"}


@tool(response_format="content_and_artifact")
def get_weather(city: str, unit: str = "C") -> tuple[str, dict[str, Any]]:
    """Current weather for a city.

    Args:
        city: The city, e.g. "Paris".
        unit: "C" or "F".
    """
    if city == "Tokyo":
        raise TimeoutError("weather service did not answer in 5s")
    return "18.5°C, sunny", ARTIFACT


SCRIPT = [
    AIMessage(
        "",
        tool_calls=[
            ToolCall(id="call_paris", name="get_weather", args={"city": "Paris"}),
            ToolCall(id="call_tokyo", name="get_weather", args={"city": "Tokyo", "unit": "C"}),
        ],
        usage=Usage(input_tokens=120, output_tokens=38),
    ),
    AIMessage(
        "Paris: 18.5°C and sunny. Tokyo's weather is unavailable right now.",
        usage=Usage(input_tokens=210, output_tokens=21),
    ),
]


def build(model: ScriptedChatModel, *, use_async: bool) -> Any:
    tools = [get_weather]

    if use_async:

        async def agent(state: MessagesState) -> dict[str, list[AIMessage]]:
            return {"messages": [await model.ainvoke(state.messages, tools=tools)]}

    else:

        def agent(state: MessagesState) -> dict[str, list[AIMessage]]:  # type: ignore[misc]
            return {"messages": [model.invoke(state.messages, tools=tools)]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode(tools))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=MemoryCheckpointer())


INPUT = {
    "messages": [
        SystemMessage("You are a weather assistant.", id="sys-1", name="weather_policy"),
        HumanMessage("Weather in Paris and Tokyo?", name="User_A"),
    ]
}


def run(use_async: bool) -> tuple[ScriptedChatModel, Any, MessagesState]:
    model = ScriptedChatModel(SCRIPT)
    app = build(model, use_async=use_async)
    if use_async:
        out = asyncio.run(app.ainvoke(INPUT, thread_id="t1"))
    else:
        out = app.invoke(INPUT, thread_id="t1")
    return model, app, out


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_react_timeline_message_by_message(use_async: bool) -> None:
    model, _, out = run(use_async)
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

    assert (system.id, system.name, system.content) == (
        "sys-1",
        "weather_policy",
        "You are a weather assistant.",
    )
    assert (human.name, human.text) == ("User_A", "Weather in Paris and Tokyo?")

    assert call.text == ""
    assert call.tool_calls == [
        ToolCall(id="call_paris", name="get_weather", args={"city": "Paris"}),
        ToolCall(id="call_tokyo", name="get_weather", args={"city": "Tokyo", "unit": "C"}),
    ]
    assert call.usage == Usage(input_tokens=120, output_tokens=38)

    assert (paris.tool_call_id, paris.name, paris.status) == (
        "call_paris",
        "get_weather",
        "success",
    )
    assert (paris.content, paris.artifact) == ("18.5°C, sunny", ARTIFACT)
    assert (tokyo.tool_call_id, tokyo.name, tokyo.status) == ("call_tokyo", "get_weather", "error")
    assert tokyo.content == (
        "Error: tool `get_weather` raised TimeoutError: weather service did not answer in 5s"
    )
    assert tokyo.artifact is None

    assert answer.text == "Paris: 18.5°C and sunny. Tokyo's weather is unavailable right now."
    assert not answer.has_tool_calls

    ids = [m.id for m in timeline]
    assert None not in ids
    assert len(set(ids)) == len(ids)

    # what the model saw: the tool's schema, then the whole timeline up to its turn
    first, second = model.requests
    (spec,) = first.tools
    assert (spec.name, spec.parameters) == ("get_weather", get_weather.json_schema)
    assert first.messages == timeline[:2]
    assert second.messages == timeline[:5]


def test_react_timeline_checkpoints() -> None:
    _, app, out = run(use_async=False)
    history = list(reversed(list(app.get_state_history("t1"))))
    assert [(s.step, s.metadata.get("nodes"), s.next) for s in history] == [
        (-1, None, ("__start__",)),  # the checkpoint before the input: the empty state
        (0, ["__start__"], ("agent",)),
        (1, ["agent"], ("tools",)),
        (2, ["tools"], ("agent",)),
        (3, ["agent"], ()),
    ]
    assert [len(s.values.messages) for s in history] == [0, 2, 3, 5, 6]
    assert history[-1].values == out
    assert history[-1].metadata["usage"]["tool_calls"] == 2
    # the artifact is stored with its message, and comes back from the checkpoint intact
    assert app.get_state("t1").values.messages[3].artifact == ARTIFACT


def test_replaying_the_tools_step_runs_no_tool_twice() -> None:
    calls: list[str] = []

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        calls.append(city)
        return city.upper()

    model = ScriptedChatModel(
        [
            {"tool_calls": [{"name": "lookup", "args": {"city": "Oslo"}}]},
            "done",
            "done again",
        ]
    )

    def agent(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [model.invoke(state.messages, tools=[lookup])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([lookup]))
    g.add_edge(START, "agent").add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    app = g.compile(checkpointer=MemoryCheckpointer())
    app.invoke({"messages": [HumanMessage("Oslo?")]}, thread_id="t")
    assert calls == ["Oslo"]
    # fork from the checkpoint after the tools step: the answered call stays answered
    after_tools = next(s for s in app.get_state_history("t") if s.metadata["nodes"] == ["tools"])
    forked = app.invoke(None, thread_id="t", checkpoint_id=after_tools.checkpoint_id)
    assert calls == ["Oslo"]
    assert forked.messages[-1].text == "done again"
    assert END == "__end__"
