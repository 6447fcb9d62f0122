"""The names a compat program uses, taken from flowgraph or from LangGraph.

Programs are written once against a `Lib` and run with either library, so
the assertions that follow compare flowgraph's behaviour with LangGraph's
own. Only what the README's migration table changes differs between the
two: imports, and `thread_id=` where LangGraph takes a `config` dict.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

import pytest

LIBRARIES = ("flowgraph", "langgraph")


def has_langgraph() -> bool:
    return all(importlib.util.find_spec(name) for name in ("langgraph", "langchain_core"))


@dataclass(frozen=True)
class Lib:
    """One library's spelling of everything the compat programs use."""

    name: str
    StateGraph: Any
    START: str
    END: str
    Command: Any
    Send: Any
    RetryPolicy: Any
    MessagesState: Any
    add_messages: Any
    ToolNode: Any
    tools_condition: Any
    create_react_agent: Any
    tool: Any
    HumanMessage: Any
    AIMessage: Any
    SystemMessage: Any
    ToolMessage: Any
    ToolCall: Any
    trim_messages: Any
    checkpointer: Any
    """A factory of in-memory checkpointers (MemoryCheckpointer / InMemorySaver)."""
    scripted_model: Any
    """`scripted_model(replies)`: a chat model answering with `replies` (AIMessages) in
    turn and keeping, in `.sent_tools`, the names of the tools each call offered."""

    def invoke(self, app: Any, input: Any, thread_id: str | None = None) -> Any:
        """`app.invoke(input)`, on a thread when one is named (LangGraph: in `config`)."""
        if thread_id is None:
            return app.invoke(input)
        if self.name == "flowgraph":
            return app.invoke(input, thread_id=thread_id)
        return app.invoke(input, {"configurable": {"thread_id": thread_id}})


def load(name: str) -> Lib:
    """The `Lib` of `name`; LangGraph's is skipped when LangGraph is not installed."""
    if name == "flowgraph":
        import flowgraph
        from flowgraph.checkpoint import MemoryCheckpointer

        return Lib(
            name=name,
            StateGraph=flowgraph.StateGraph,
            START=flowgraph.START,
            END=flowgraph.END,
            Command=flowgraph.Command,
            Send=flowgraph.Send,
            RetryPolicy=flowgraph.RetryPolicy,
            MessagesState=flowgraph.MessagesState,
            add_messages=flowgraph.add_messages,
            ToolNode=flowgraph.ToolNode,
            tools_condition=flowgraph.tools_condition,
            create_react_agent=flowgraph.create_react_agent,
            tool=flowgraph.tool,
            HumanMessage=flowgraph.HumanMessage,
            AIMessage=flowgraph.AIMessage,
            SystemMessage=flowgraph.SystemMessage,
            ToolMessage=flowgraph.ToolMessage,
            ToolCall=flowgraph.ToolCall,
            trim_messages=flowgraph.trim_messages,
            checkpointer=MemoryCheckpointer,
            scripted_model=_FlowgraphScripted,
        )
    if not has_langgraph():
        pytest.skip("LangGraph is not installed (pip install langgraph langchain-core)")
    from langchain_core import messages
    from langchain_core.tools import tool
    from langgraph import graph, prebuilt, types
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph.message import add_messages

    return Lib(
        name=name,
        StateGraph=graph.StateGraph,
        START=graph.START,
        END=graph.END,
        Command=types.Command,
        Send=types.Send,
        RetryPolicy=types.RetryPolicy,
        MessagesState=graph.MessagesState,
        add_messages=add_messages,
        ToolNode=prebuilt.ToolNode,
        tools_condition=prebuilt.tools_condition,
        create_react_agent=prebuilt.create_react_agent,
        tool=tool,
        HumanMessage=messages.HumanMessage,
        AIMessage=messages.AIMessage,
        SystemMessage=messages.SystemMessage,
        ToolMessage=messages.ToolMessage,
        ToolCall=messages.ToolCall,
        trim_messages=messages.trim_messages,
        checkpointer=InMemorySaver,
        scripted_model=_langchain_scripted(),
    )


class _FlowgraphScripted:
    """flowgraph's ScriptedChatModel, with the tools each call offered by name."""

    def __new__(cls, replies: list[Any]) -> Any:
        from flowgraph import ScriptedChatModel

        class Scripted(ScriptedChatModel):
            @property
            def sent_tools(self) -> list[list[str]]:
                return [[tool.name for tool in r.tools] for r in self.requests]

        return Scripted(replies)


def _langchain_scripted() -> Any:
    """A LangChain chat model of our own answering from a script (LangChain's fakes cannot
    bind tools), recording the tools each call offered."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool

    class Scripted(BaseChatModel):
        replies: list[Any]
        sent_tools: list[list[str]]

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Any:
            self.sent_tools.append([t["function"]["name"] for t in kw.get("tools", [])])
            reply = self.replies[len(self.sent_tools) - 1]
            return ChatResult(generations=[ChatGeneration(message=reply)])

        def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kw: Any) -> Any:
            specs = [convert_to_openai_tool(t) for t in tools]
            return self.bind(tools=specs, tool_choice=tool_choice, **kw)

    def make(replies: list[Any]) -> Any:
        return Scripted(replies=replies, sent_tools=[])

    return make
