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
    )
