"""The ReAct graph the graph benchmarks run, written once per library with the same logic.

A scripted model node answers each user message with `rounds` tool calls
(one per reply) and then a final answer; a ToolNode-like node answers every
tool call with one ToolMessage carrying its `tool_call_id`; a
tools_condition-like branch sends the model's reply to the tools or to END.
A user turn therefore takes `2 * rounds + 1` supersteps.

Both sides build fresh messages on every call: both libraries give id-less
messages an id, and LangGraph does it by mutating the message in place, so
a message object is never reused across runs. The nodes are hand-written on
both sides (not LangGraph's prebuilt `ToolNode`/`tools_condition`, which do
more work per call), so the figures compare the engines, not the prebuilts.

Turns carry the conversation over without a checkpointer: the next input is
the previous run's final messages plus a new user message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "ROUNDS",
    "as_async",
    "messages_per_turn",
    "ours_graph",
    "ours_nodes",
    "ours_reply",
    "ours_turn_input",
    "rounds_so_far",
    "steps_per_turn",
    "theirs_graph",
    "theirs_nodes",
    "theirs_reply",
    "theirs_turn_input",
]

ROUNDS = 2
"""Tool rounds per user turn in the ReAct loop."""


def steps_per_turn(rounds: int) -> int:
    """Supersteps one user turn takes: model, (tools, model) per round."""
    return 2 * rounds + 1


def messages_per_turn(rounds: int) -> int:
    """Messages one user turn adds: the user's, (AI call, tool result) per round, the answer."""
    return 2 * rounds + 2


def rounds_so_far(messages: Any) -> int:
    """Model replies since the last user message (the same code on both sides)."""
    rounds = 0
    for message in reversed(messages):
        kind = message.type
        if kind == "human":
            break
        if kind == "ai":
            rounds += 1
    return rounds


# -- flowgraph ------------------------------------------------------------------


def ours_reply(messages: Any, rounds: int) -> Any:
    """The scripted model's next message: a `lookup` call until `rounds` are done, then "done"."""
    from flowgraph import AIMessage

    if rounds_so_far(messages) < rounds:
        call = {"id": f"call-{len(messages)}", "name": "lookup", "args": {"q": len(messages)}}
        return AIMessage("", tool_calls=[call])
    return AIMessage("done")


def ours_nodes(rounds: int = ROUNDS) -> tuple[Callable[..., Any], ...]:
    """The ReAct graph's sync model node, tool node and branch on flowgraph's messages."""
    from flowgraph import END, ToolMessage

    def model(state: Any) -> dict[str, Any]:
        return {"messages": [ours_reply(state.messages, rounds)]}

    def tools(state: Any) -> dict[str, Any]:
        calls = state.messages[-1].tool_calls
        return {
            "messages": [
                ToolMessage(f"result {call.args['q']}", tool_call_id=call.id) for call in calls
            ]
        }

    def route(state: Any) -> str:
        last = state.messages[-1]
        return "tools" if last.has_tool_calls else END

    return model, tools, route


def ours_graph(rounds: int = ROUNDS, *, is_async: bool = False) -> Any:
    """The ReAct graph on flowgraph: `MessagesState`, sync or async nodes."""
    from flowgraph import END, START, MessagesState, StateGraph

    model, tools, route = ours_nodes(rounds)
    graph = StateGraph(MessagesState)
    graph.add_node("model", as_async(model) if is_async else model)
    graph.add_node("tools", as_async(tools) if is_async else tools)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, ["tools", END])
    graph.add_edge("tools", "model")
    return graph.compile()


def ours_turn_input(previous: list[Any], turn: int) -> dict[str, Any]:
    """The next run's input: the conversation so far and a fresh user message."""
    from flowgraph import HumanMessage

    return {"messages": [*previous, HumanMessage(f"question {turn}")]}


# -- LangGraph ------------------------------------------------------------------


def theirs_reply(messages: Any, rounds: int) -> Any:
    """`ours_reply` with langchain_core's messages."""
    from langchain_core.messages import AIMessage

    if rounds_so_far(messages) < rounds:
        call = {
            "id": f"call-{len(messages)}",
            "name": "lookup",
            "args": {"q": len(messages)},
            "type": "tool_call",
        }
        return AIMessage("", tool_calls=[call])
    return AIMessage("done")


def theirs_nodes(rounds: int = ROUNDS) -> tuple[Callable[..., Any], ...]:
    """The same three functions on LangGraph's dict state and langchain_core's messages."""
    from langchain_core.messages import ToolMessage
    from langgraph.graph import END

    def model(state: Any) -> dict[str, Any]:
        return {"messages": [theirs_reply(state["messages"], rounds)]}

    def tools(state: Any) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls
        return {
            "messages": [
                ToolMessage(f"result {call['args']['q']}", tool_call_id=call["id"])
                for call in calls
            ]
        }

    def route(state: Any) -> str:
        last = state["messages"][-1]
        return "tools" if last.tool_calls else END

    return model, tools, route


def theirs_graph(rounds: int = ROUNDS, *, is_async: bool = False) -> Any:
    """The same graph on LangGraph: its `MessagesState` and langchain_core messages."""
    from langgraph.graph import END, START, MessagesState, StateGraph

    model, tools, route = theirs_nodes(rounds)
    graph = StateGraph(MessagesState)
    graph.add_node("model", as_async(model) if is_async else model)
    graph.add_node("tools", as_async(tools) if is_async else tools)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, ["tools", END])
    graph.add_edge("tools", "model")
    return graph.compile()


def theirs_turn_input(previous: list[Any], turn: int) -> dict[str, Any]:
    """The next run's input: the conversation so far and a fresh user message."""
    from langchain_core.messages import HumanMessage

    return {"messages": [*previous, HumanMessage(f"question {turn}")]}


def as_async(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`fn` as a coroutine function, as a node calling an async model client would be."""

    async def node(state: Any) -> Any:
        return fn(state)

    node.__name__ = fn.__name__
    return node
