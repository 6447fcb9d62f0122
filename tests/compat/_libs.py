"""The names a compat program uses, taken from flowgraph or from LangGraph.

Programs are written once against a `Lib` and run with either library, so
the assertions that follow compare flowgraph's behaviour with LangGraph's
own. Only what the README's migration table changes differs between the
two: imports, and `thread_id=` where LangGraph takes a `config` dict.
"""

from __future__ import annotations

import importlib
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
    # runtime config, context, store, interrupts, caching (issue 18, items 3, 5, 6, 8, 9)
    interrupt: Any
    RunnableConfig: Any
    Runtime: Any
    ToolRuntime: Any
    get_config: Any
    get_runtime: Any
    RemainingSteps: Any
    CachePolicy: Any
    InMemoryCache: Any
    InjectedState: Any
    InjectedStore: Any
    InjectedToolCallId: Any
    InMemoryStore: Any
    BaseStore: Any
    get_stream_writer: Any
    entrypoint: Any
    task: Any
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

    def stream(self, app: Any, input: Any, thread_id: str | None = None, **options: Any) -> Any:
        """`app.stream(input, stream_mode=..., ...)`, on a thread when one is named."""
        if thread_id is None:
            return app.stream(input, **options)
        if self.name == "flowgraph":
            return app.stream(input, thread_id=thread_id, **options)
        return app.stream(input, {"configurable": {"thread_id": thread_id}}, **options)

    def state(self, app: Any, thread_id: str) -> Any:
        """`app.get_state(...)` of a thread (LangGraph: by `config`)."""
        if self.name == "flowgraph":
            return app.get_state(thread_id)
        return app.get_state({"configurable": {"thread_id": thread_id}})


SHARED = (
    "StateGraph",
    "START",
    "END",
    "Command",
    "Send",
    "RetryPolicy",
    "MessagesState",
    "add_messages",
    "ToolNode",
    "tools_condition",
    "create_react_agent",
    "tool",
    "HumanMessage",
    "AIMessage",
    "SystemMessage",
    "ToolMessage",
    "ToolCall",
    "trim_messages",
    "interrupt",
    "RunnableConfig",
    "Runtime",
    "ToolRuntime",
    "get_config",
    "get_runtime",
    "RemainingSteps",
    "CachePolicy",
    "InMemoryCache",
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "InMemoryStore",
    "BaseStore",
    "get_stream_writer",
    "entrypoint",
    "task",
)
"""The names a program imports: from `flowgraph`, or from LangGraph's and LangChain's modules."""
FLOWGRAPH_HOMES = {"flowgraph.store": ("InMemoryStore", "BaseStore")}
"""flowgraph's names that are not on its top level."""
LANGGRAPH_HOMES = {
    "langgraph.graph": ("StateGraph", "START", "END", "MessagesState", "add_messages"),
    "langgraph.types": ("Command", "Send", "RetryPolicy", "interrupt", "CachePolicy"),
    "langgraph.config": ("get_config", "get_stream_writer"),
    "langgraph.func": ("entrypoint", "task"),
    "langgraph.prebuilt": (
        "ToolNode",
        "tools_condition",
        "create_react_agent",
        "ToolRuntime",
        "InjectedState",
        "InjectedStore",
    ),
    "langchain_core.tools": ("tool", "InjectedToolCallId"),
    "langchain_core.runnables": ("RunnableConfig",),
    "langgraph.runtime": ("Runtime", "get_runtime"),
    "langgraph.managed": ("RemainingSteps",),
    "langgraph.cache.memory": ("InMemoryCache",),
    "langgraph.store.memory": ("InMemoryStore",),
    "langgraph.store.base": ("BaseStore",),
    "langchain_core.messages": (
        "HumanMessage",
        "AIMessage",
        "SystemMessage",
        "ToolMessage",
        "ToolCall",
        "trim_messages",
    ),
}


def load(name: str) -> Lib:
    """The `Lib` of `name`; LangGraph's is skipped when LangGraph is not installed."""
    if name == "flowgraph":
        from flowgraph.checkpoint import MemoryCheckpointer

        homes = {name: module for module, names in FLOWGRAPH_HOMES.items() for name in names}
        names = {
            attribute: getattr(
                importlib.import_module(homes.get(attribute, "flowgraph")), attribute
            )
            for attribute in SHARED
        }
        return Lib(
            name=name, checkpointer=MemoryCheckpointer, scripted_model=_FlowgraphScripted, **names
        )
    if not has_langgraph():
        pytest.skip("LangGraph is not installed (pip install langgraph langchain-core)")
    from langgraph.checkpoint.memory import InMemorySaver

    names = {
        attribute: getattr(importlib.import_module(module), attribute)
        for module, attributes in LANGGRAPH_HOMES.items()
        for attribute in attributes
    }
    assert sorted(names) == sorted(SHARED)
    return Lib(name=name, checkpointer=InMemorySaver, scripted_model=_langchain_scripted(), **names)


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
