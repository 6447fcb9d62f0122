"""The prebuilt ReAct agent: a model node and a tool node in a loop, and a facade to call it.

agent  --(tool calls)-->  tools
  ^                         |
  +-------------------------+
agent  --(no tool calls)--> END
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.graph import END, START, Budget, CompiledGraph, StateGraph
from flowgraph.messages import AIMessage, BaseMessage, HumanMessage, MessageLike
from flowgraph.models import ChatModel, ChatOptions
from flowgraph.nodes._routing import tools_condition
from flowgraph.nodes._tool_node import ToolNode
from flowgraph.nodes.model import Memory, ModelNode
from flowgraph.prompts import SystemPromptTemplate
from flowgraph.state import MessagesState
from flowgraph.tools import Tool

__all__ = ["Agent", "create_react_agent"]


def create_react_agent(
    model: ChatModel,
    tools: Sequence[Tool | Callable[..., Any]] = (),
    *,
    system: str | SystemPromptTemplate | None = None,
    checkpointer: BaseCheckpointer | None = None,
    state_schema: type[Any] = MessagesState,
    options: ChatOptions | None = None,
    memory: Memory | None = None,
    budget: Budget | None = None,
    name: str = "react_agent",
    store: Any = None,
    context_schema: type[Any] | None = None,
) -> CompiledGraph:
    """A compiled graph that calls `model` until it stops asking for `tools`.

    With no tools it is a single model call per turn. A checkpointer makes
    every step resumable and keeps the conversation per `thread_id`; a
    long-term `store` (`flowgraph.store`) reaches tools that ask for it with
    `InjectedStore` or `ToolRuntime`, and `context_schema` types the
    `invoke(..., context=...)` they read from `ToolRuntime.context`.
    """
    graph = StateGraph(state_schema, context_schema=context_schema)
    graph.add_node(
        "agent", ModelNode(model, tools=tools, system=system, options=options, memory=memory)
    )
    graph.add_edge(START, "agent")
    if tools:
        graph.add_node("tools", ToolNode(tools))
        graph.add_conditional_edges("agent", tools_condition, ["tools", END])
        graph.add_edge("tools", "agent")
    else:
        graph.add_edge("agent", END)
    return graph.compile(checkpointer=checkpointer, budget=budget, name=name, store=store)


class Agent:
    """Call an agent like a function: a question in, the final AIMessage out.

    The conversation of each `thread_id` is kept by the checkpointer (in
    memory unless one is given), so a second call continues the first.
    """

    def __init__(
        self,
        model: ChatModel,
        tools: Sequence[Tool | Callable[..., Any]] = (),
        *,
        system: str | SystemPromptTemplate | None = None,
        checkpointer: BaseCheckpointer | None = None,
        options: ChatOptions | None = None,
        memory: Memory | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.app = create_react_agent(
            model,
            tools,
            system=system,
            checkpointer=checkpointer if checkpointer is not None else MemoryCheckpointer(),
            options=options,
            memory=memory,
            budget=budget,
        )

    def call(
        self, input: str | MessageLike | Sequence[MessageLike], *, thread_id: str = "default"
    ) -> AIMessage:
        """Add `input` to the thread, run the agent, and return its last AIMessage."""
        state = self.app.invoke({"messages": _as_messages(input)}, thread_id=thread_id)
        return _last_reply(state, thread_id)

    async def acall(
        self, input: str | MessageLike | Sequence[MessageLike], *, thread_id: str = "default"
    ) -> AIMessage:
        """Add `input` to the thread, run the agent, and return its last AIMessage."""
        state = await self.app.ainvoke({"messages": _as_messages(input)}, thread_id=thread_id)
        return _last_reply(state, thread_id)


def _as_messages(input: str | MessageLike | Sequence[MessageLike]) -> list[Any]:
    if isinstance(input, str):
        return [HumanMessage(content=input)]
    if isinstance(input, (BaseMessage, dict, tuple)):
        return [input]
    return list(input)


def _last_reply(state: Any, thread_id: str) -> AIMessage:
    for message in reversed(state.messages):
        if isinstance(message, AIMessage):
            return message
    raise RuntimeError(f"The agent finished thread {thread_id!r} without an AI message")
