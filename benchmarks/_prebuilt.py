"""The prebuilt path, written once per library: `@tool`, `ToolNode`, `tools_condition`,
`create_react_agent`.

The conversation is `_react.py`'s: each user message gets `rounds` tool calls
(one per model reply), then a final answer. What differs is who does the
work: here a real `@tool` (sync or async) answers the calls through each
library's own `ToolNode`, its `tools_condition` routes, and for the agent
figures each library's `create_react_agent` drives a scripted chat model
(flowgraph's `ScriptedChatModel`; on LangGraph's side a `BaseChatModel`
subclass with the same script) instead of a hand-written model node.

Nothing here imports either library at module level, so the cold-resume
subprocess can time the import itself.
"""

from __future__ import annotations

import warnings
from typing import Any

from benchmarks._react import ROUNDS, as_async, ours_nodes, ours_reply, theirs_nodes, theirs_reply

__all__ = [
    "lookup",
    "ours_agent",
    "ours_fanout_graph",
    "ours_react_graph",
    "ours_tool",
    "theirs_agent",
    "theirs_fanout_graph",
    "theirs_react_graph",
    "theirs_tool",
]


def lookup(q: int) -> str:
    """Look up the answer for query number q."""
    return f"result {q}"


async def alookup(q: int) -> str:
    """Look up the answer for query number q."""
    return f"result {q}"


# -- flowgraph ------------------------------------------------------------------


def ours_tool(*, is_async: bool) -> Any:
    """`lookup` as a flowgraph `@tool`, sync or async."""
    from flowgraph import tool

    return tool("lookup")(alookup if is_async else lookup)


def ours_react_graph(
    *,
    tool_async: bool,
    model_async: bool = False,
    checkpointer: Any = None,
    rounds: int = ROUNDS,
) -> Any:
    """The ReAct graph with a scripted model node, `ToolNode([lookup])` and `tools_condition`."""
    from flowgraph import START, MessagesState, StateGraph, ToolNode, tools_condition

    model, _, _ = ours_nodes(rounds)
    graph = StateGraph(MessagesState)
    graph.add_node("model", as_async(model) if model_async else model)
    graph.add_node("tools", ToolNode([ours_tool(is_async=tool_async)]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=checkpointer)


def ours_agent(*, tool_async: bool, checkpointer: Any = None, rounds: int = ROUNDS) -> Any:
    """`create_react_agent` over a `ScriptedChatModel` that follows the conversation's script."""
    from flowgraph import ScriptedChatModel, create_react_agent

    model = ScriptedChatModel(lambda messages: ours_reply(messages, rounds))
    return create_react_agent(model, [ours_tool(is_async=tool_async)], checkpointer=checkpointer)


def ours_fanout_graph(calls: int, *, tool_async: bool) -> Any:
    """A model node asks for `calls` tool calls; one `Send` per call to a ToolNode answers each."""
    from flowgraph import END, START, AIMessage, MessagesState, Send, StateGraph, ToolNode

    def model(state: Any) -> dict[str, Any]:
        tool_calls = [{"id": f"call-{i}", "name": "lookup", "args": {"q": i}} for i in range(calls)]
        return {"messages": [AIMessage("", tool_calls=tool_calls)]}

    def fan_out(state: Any) -> list[Any]:
        return [
            Send("tools", {"messages": [AIMessage("", tool_calls=[call])]})
            for call in state.messages[-1].tool_calls
        ]

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode([ours_tool(is_async=tool_async)]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", fan_out, ["tools"])
    graph.add_edge("tools", END)
    return graph.compile()


# -- LangGraph ------------------------------------------------------------------


def theirs_tool(*, is_async: bool) -> Any:
    """`lookup` as a langchain_core `@tool`, sync or async."""
    from langchain_core.tools import tool

    return tool("lookup")(alookup if is_async else lookup)


def theirs_react_graph(
    *,
    tool_async: bool,
    model_async: bool = False,
    checkpointer: Any = None,
    rounds: int = ROUNDS,
) -> Any:
    """The same graph with LangGraph's `ToolNode` and `tools_condition`."""
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    model, _, _ = theirs_nodes(rounds)
    graph = StateGraph(MessagesState)
    graph.add_node("model", as_async(model) if model_async else model)
    graph.add_node("tools", ToolNode([theirs_tool(is_async=tool_async)]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=checkpointer)


def _theirs_chat_model(rounds: int) -> Any:
    """A langchain_core chat model that answers with the conversation's script."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedChatModel(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **_: Any
        ) -> Any:
            reply = theirs_reply(messages, rounds)
            return ChatResult(generations=[ChatGeneration(message=reply)])

        def bind_tools(self, tools: Any, **_: Any) -> Any:
            return self

    return ScriptedChatModel()


def theirs_agent(*, tool_async: bool, checkpointer: Any = None, rounds: int = ROUNDS) -> Any:
    """LangGraph's `create_react_agent` over the same script."""
    with warnings.catch_warnings():  # deprecated in LangGraph 1.0 in favour of langchain's
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

        return create_react_agent(
            _theirs_chat_model(rounds),
            [theirs_tool(is_async=tool_async)],
            checkpointer=checkpointer,
        )


def theirs_fanout_graph(calls: int, *, tool_async: bool) -> Any:
    """The same fan-out with LangGraph's `Send` and `ToolNode`."""
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode
    from langgraph.types import Send

    def model(state: Any) -> dict[str, Any]:
        tool_calls = [
            {"id": f"call-{i}", "name": "lookup", "args": {"q": i}, "type": "tool_call"}
            for i in range(calls)
        ]
        return {"messages": [AIMessage("", tool_calls=tool_calls)]}

    def fan_out(state: Any) -> list[Any]:
        return [
            Send("tools", {"messages": [AIMessage("", tool_calls=[call])]})
            for call in state["messages"][-1].tool_calls
        ]

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode([theirs_tool(is_async=tool_async)]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", fan_out, ["tools"])
    graph.add_edge("tools", END)
    return graph.compile()
