"""`InjectedStore`: a tool parameter filled with the running graph's long-term store.

A run of a graph compiled with `store=` binds it (`flowgraph._context.bind_store`)
for its nodes and tools; some tests here bind a store the same way around a
ToolNode called on its own, and check what the tools receive.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Annotated, Any

import pytest

from flowgraph import (
    AIMessage,
    HumanMessage,
    InjectedStore,
    InjectedToolCallId,
    ScriptedChatModel,
    ToolCall,
    ToolMessage,
    ToolNode,
    create_react_agent,
    tool,
)
from flowgraph._context import bind_store, current_store
from flowgraph.errors import ToolError
from flowgraph.store import BaseStore, InMemoryStore, get_store


@tool
def remember(fact: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Remember a fact about the user."""
    count = len(store.search(("facts",), limit=100))
    store.put(("facts",), f"f{count}", {"text": fact})
    return f"remembered {count + 1} facts"


@tool
async def recall(
    topic: str,
    store: Annotated[BaseStore, InjectedStore],
    call_id: Annotated[str, InjectedToolCallId],
) -> str:
    """Recall facts about a topic."""
    found = await store.asearch(("facts",), query=topic)
    return f"{call_id}: " + "; ".join(item.value["text"] for item in found)


@pytest.fixture
def store() -> Iterator[InMemoryStore]:
    memory = InMemoryStore()
    token = bind_store(memory)
    try:
        yield memory
    finally:
        current_store.reset(token)


def test_the_store_parameter_is_hidden_from_the_model() -> None:
    assert remember.json_schema["properties"] == {"fact": {"type": "string"}}
    assert [(i.param, i.kind) for i in recall.injections] == [
        ("store", "store"),
        ("call_id", "tool_call_id"),
    ]
    assert "store" not in recall.json_schema["properties"]


def test_a_tool_node_gives_tools_the_bound_store(store: InMemoryStore) -> None:
    calls = AIMessage(
        "",
        tool_calls=[
            ToolCall(id="c1", name="remember", args={"fact": "likes tea"}),
        ],
    )
    out = ToolNode([remember, recall]).invoke({"messages": [HumanMessage("hi"), calls]})
    assert [m.content for m in out["messages"]] == ["remembered 1 facts"]
    item = store.get(("facts",), "f0")
    assert item is not None and item.value == {"text": "likes tea"}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_agent_remembers_across_threads_through_the_store(mode: str) -> None:
    store = InMemoryStore()
    model = ScriptedChatModel(
        [
            {"tool_calls": [{"name": "remember", "args": {"fact": "prefers dark mode"}}]},
            "Noted.",
            {"tool_calls": [{"name": "recall", "args": {"topic": "dark"}, "id": "r1"}]},
            "You prefer dark mode.",
        ]
    )
    app = create_react_agent(model, [remember, recall], store=store)  # compile(store=...)

    def run(text: str) -> Any:
        if mode == "sync":
            return app.invoke({"messages": [HumanMessage(text)]})
        return asyncio.run(app.ainvoke({"messages": [HumanMessage(text)]}))

    first = run("I prefer dark mode")
    assert (
        isinstance(first.messages[2], ToolMessage)
        and first.messages[2].content == "remembered 1 facts"
    )
    second = run("What do I prefer?")  # a new conversation: only the store connects them
    assert second.messages[2].content == "r1: prefers dark mode"
    assert second.messages[-1].text == "You prefer dark mode."
    assert get_store() is None  # bound for the runs only


def test_without_a_store_the_model_reads_an_error_naming_the_fix() -> None:
    calls = AIMessage("", tool_calls=[ToolCall(id="c1", name="remember", args={"fact": "x"})])
    [answer] = ToolNode([remember]).invoke({"messages": [calls]})["messages"]
    assert answer.status == "error"
    assert "uses the long-term store in 'store', but none is set" in answer.text
    assert "compile the graph with store=..." in answer.text
    with pytest.raises(ToolError, match="none is set"):
        remember.invoke({"fact": "x"})


def test_a_store_given_to_invoke_wins_over_the_bound_one(store: InMemoryStore) -> None:
    other = InMemoryStore()
    assert remember.invoke({"fact": "a"}, store=other) == "remembered 1 facts"
    assert asyncio.run(remember.ainvoke({"fact": "b"}, store=other)) == "remembered 2 facts"
    assert store.search(("facts",)) == []
    assert len(other.search(("facts",))) == 2


def test_get_store_returns_the_bound_store_inside_and_none_outside() -> None:
    assert get_store() is None
    memory = InMemoryStore()
    token = bind_store(memory)
    try:
        assert get_store() is memory
        hidden = bind_store(None)
        assert get_store() is None
        current_store.reset(hidden)
        assert asyncio.run(_in_a_task()) is memory  # tasks copy the context
    finally:
        current_store.reset(token)
    assert get_store() is None


async def _in_a_task() -> BaseStore | None:
    return await asyncio.to_thread(get_store)
