"""The prebuilt ReAct agent: a model node and a tool node in a loop, and a facade to call it.

agent  --(tool calls)-->  tools
  ^                         |
  +-------------------------+
agent  --(no tool calls)--> END
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Never, TypeAlias

from typing_extensions import TypeVar

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.graph import END, START, Budget, CompiledGraph, StateGraph
from flowgraph.graph._engine.once import aonce, call_key
from flowgraph.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    MessageLike,
    SystemMessage,
    coerce_messages,
)
from flowgraph.models import ChatModel, ChatOptions
from flowgraph.nodes._routing import tools_condition
from flowgraph.nodes._state import messages_of
from flowgraph.nodes._tool_node import ToolNode
from flowgraph.nodes._trim import trim_messages
from flowgraph.nodes.model import Memory, ModelNode, mend_tool_calls
from flowgraph.prompts import SystemPromptTemplate
from flowgraph.state import MessagesState
from flowgraph.tools import Tool

__all__ = ["Agent", "create_react_agent"]


Prompt: TypeAlias = "str | SystemMessage | SystemPromptTemplate | Callable[..., Any] | Any"
"""What `prompt=` takes, as LangGraph's prebuilt agent does: a text or a SystemMessage sent
first; a function of the state (sync or async) returning the messages to send; or an object
with `invoke(state)` (a LangChain prompt template)."""

StateT = TypeVar("StateT", default=MessagesState)
"""The agent's state: `state_schema`, or MessagesState when none is given."""

_UNTAKEN = {
    "response_format": "not offered: ask for JSON in the prompt and parse the last reply",
    "pre_model_hook": "use `memory=` (trimming) or `prompt=` (a function of the state)",
    "post_model_hook": "build the graph by hand (ModelNode, ToolNode, see prebuilt nodes)",
    "debug": "use `stream(..., mode='events')`",
    "version": "flowgraph runs a step's tool calls in one ToolNode task",
    "config_schema": "use `context_schema=`",
}


def create_react_agent(
    model: ChatModel,
    tools: Sequence[Tool | Callable[..., Any]] | ToolNode = (),
    *,
    system: str | SystemPromptTemplate | None = None,
    prompt: Prompt | None = None,
    checkpointer: BaseCheckpointer | None = None,
    state_schema: type[StateT] | None = None,
    options: ChatOptions | None = None,
    memory: Memory | None = None,
    budget: Budget | None = None,
    name: str | None = None,
    store: Any = None,
    context_schema: type[Any] | None = None,
    interrupt_before: Sequence[str] = (),
    interrupt_after: Sequence[str] = (),
    **unknown: Never,  # a checker flags any other keyword; the run names our spelling
) -> CompiledGraph[StateT]:
    """A compiled graph that calls `model` until it stops asking for `tools`.

    With no tools it is a single model call per turn. A checkpointer makes
    every step resumable and keeps the conversation per `thread_id`; a
    long-term `store` (`flowgraph.store`) reaches tools that ask for it with
    `InjectedStore` or `ToolRuntime`, and `context_schema` types the
    `invoke(..., context=...)` they read from `ToolRuntime.context`.
    `prompt=` is LangGraph's spelling (see `Prompt`); `system=` replaces
    the state's system message, `prompt=` is sent before the state's
    messages as LangGraph sends it. `interrupt_before`/`interrupt_after`
    name "agent" or "tools", as in LangGraph.
    """
    if unknown:
        parts = [f"{k!r} ({_UNTAKEN[k]})" if k in _UNTAKEN else repr(k) for k in unknown]
        raise TypeError(
            f"create_react_agent() got unexpected keyword argument(s): {', '.join(parts)}"
        )
    if system is not None and prompt is not None:
        raise TypeError("create_react_agent() takes system= or prompt=, not both")
    if isinstance(prompt, (str, SystemPromptTemplate)):
        system, prompt = prompt, None
    tool_node = tools if isinstance(tools, ToolNode) else ToolNode(tools) if tools else None
    tool_list = list(tool_node.tools.values()) if tool_node is not None else []
    graph: StateGraph[Any, Any] = StateGraph(
        state_schema if state_schema is not None else MessagesState, context_schema=context_schema
    )
    node_options = {"tools": tool_list, "options": options, "memory": memory}
    agent = (
        _AgentModelNode(model, system=system, **node_options)  # type: ignore[arg-type]
        if prompt is None
        else _PromptedModelNode(model, prompt, **node_options)
    )
    agent.reply_name = name
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    if tool_node is not None:
        graph.add_node("tools", tool_node)
        graph.add_conditional_edges("agent", tools_condition, ["tools", END])
        graph.add_edge("tools", "agent")
    else:
        graph.add_edge("agent", END)
    return graph.compile(
        checkpointer=checkpointer,
        budget=budget,
        name=name or "react_agent",
        store=store,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
    )


class _AgentModelNode(ModelNode):
    """The agent's model node: its replies carry the agent's `name=`, as LangGraph's do."""

    reply_name: str | None = None

    async def _reply(self, messages: list[AnyMessage]) -> AIMessage:
        reply = await super()._reply(messages)
        if self.reply_name is None:
            return reply
        return reply.model_copy(update={"name": self.reply_name})


class _PromptedModelNode(_AgentModelNode):
    """A ModelNode whose messages come from LangGraph's `prompt=`: a SystemMessage put
    first, a function of the state, or a prompt object's `invoke(state)`."""

    def __init__(self, model: ChatModel, prompt: Any, **options: Any) -> None:
        super().__init__(model, **options)
        self.prompt = prompt

    async def __call__(self, state: Any) -> dict[str, list[AIMessage]]:
        prompt = self.prompt
        if isinstance(prompt, SystemMessage):
            messages: Any = [prompt, *messages_of(state, self.key, who="create_react_agent")]
        elif hasattr(prompt, "ainvoke"):
            messages = await prompt.ainvoke(state)
        elif hasattr(prompt, "invoke"):
            messages = prompt.invoke(state)
        elif callable(prompt):
            messages = prompt(state)
            if inspect.isawaitable(messages):
                messages = await messages
        else:
            raise TypeError(
                "create_react_agent(prompt=...) takes a str, a SystemMessage, a function of "
                f"the state or an object with invoke(state), not {type(prompt).__name__}"
            )
        if hasattr(messages, "to_messages"):  # a LangChain-style prompt value
            messages = messages.to_messages()
        history = list(coerce_messages(messages))
        if isinstance(self.memory, int):
            history = trim_messages(history, max_messages=self.memory)
        elif self.memory is not None:
            history = list(self.memory(history))
        history = mend_tool_calls(history)
        reply = await aonce(call_key("model_reply"), self._reply, history)
        return {self.key: [reply]}


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
