"""A support desk written the way LangGraph's tutorials write it, run by flowgraph.

Only the imports differ from the LangGraph program (see docs/migration.md,
"Migrating from LangGraph"): a `typing_extensions.TypedDict` state with
`NotRequired` and `Annotated` reducers, plain functions as tools,
`llm.bind_tools(...)` called inside a node, `trim_messages` with LangChain's
arguments, a node routing with `-> Command[Literal[...]]`, `set_entry_point`,
a node with no edge out (the run ends there), `pretty_print()`,
`get_graph().draw_mermaid()`, editing the first message as a chat UI does (new
input at the history's checkpoint before it) and `with_config`.

Runs offline by default: a ScriptedChatModel plays the LLM. Point it at a
real model with FLOWGRAPH_MODEL (e.g. "openai:gpt-4o-mini").

    python examples/from_langgraph.py [path/to/checkpoints.db]
    flowgraph run examples/from_langgraph.py "Where is my order 42?"
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal

from typing_extensions import NotRequired, TypedDict  # noqa: UP035 - as LangGraph's docs import them

from flowgraph import (
    Command,
    StateGraph,
    ToolNode,
    add_messages,
    tools_condition,
    trim_messages,
)
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel, init_chat_model

ORDERS = {"42": "shipped on Monday, arriving Thursday", "7": "waiting for stock"}


class State(TypedDict):
    messages: Annotated[list[Any], add_messages]
    topic: NotRequired[str]


def lookup_order(order_id: str) -> str:
    """Find where an order is, by its number."""
    return ORDERS.get(order_id, "no such order")


def cancel_order(order_id: str, reason: str) -> str:
    """Cancel an order that has not shipped yet."""
    return f"order {order_id} cancelled ({reason})"


def scripted_reply(messages: list[Any]) -> Any:
    """The offline model: looks up the order number asked about, then says where it is."""
    last = messages[-1]
    if last.type == "tool":
        number = messages[-2].tool_calls[0].args["order_id"]
        status = last.text
        if status == "no such order":
            return f"I cannot find an order {number}."
        shipped, _, arrival = status.partition(", ")
        return f"Order {number}: {shipped}" + (f", {arrival}." if arrival else ".")
    number = re.search(r"\d+", last.text)
    if number:
        return {"tool_calls": [{"name": "lookup_order", "args": {"order_id": number.group()}}]}
    return "Tell me your order number and I will look it up."


def pick_model() -> Any:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


llm = pick_model()
llm_with_tools = llm.bind_tools([lookup_order, cancel_order])
trimmer = trim_messages(
    max_tokens=6, strategy="last", token_counter=len, include_system=True, start_on="human"
)


def triage(state: State) -> Command[Literal["orders", "smalltalk"]]:
    topic = "orders" if "order" in state["messages"][-1].content.lower() else "smalltalk"
    return Command(goto=topic, update={"topic": topic})


def orders(state: State) -> dict[str, Any]:
    return {"messages": [llm_with_tools.invoke(trimmer.invoke(state["messages"]))]}


def smalltalk(state: State) -> dict[str, Any]:  # no edge out: the run ends after it
    return {"messages": [("ai", "Happy to chat! Ask me about an order any time.")]}


builder = StateGraph(State)
builder.add_node("triage", triage)
builder.add_node("orders", orders)
builder.add_node("tools", ToolNode([lookup_order, cancel_order]))
builder.add_node("smalltalk", smalltalk)
builder.set_entry_point("triage")
builder.add_conditional_edges("orders", tools_condition)
builder.add_edge("tools", "orders")
app = builder.compile()
"""What `flowgraph run` loads (it binds its own store); main() binds a SQLite file."""


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "desk.db"
    graph = app.with_checkpointer(SQLiteCheckpointer(db))
    config = {"configurable": {"thread_id": "desk"}}
    state = graph.invoke({"messages": [("user", "Where is my order 42?")]}, config)
    for message in state["messages"]:
        message.pretty_print()
    print(f"\ntopic: {state.get('topic')}")
    mermaid = graph.get_graph().draw_mermaid()
    print("the diagram ends smalltalk at END:", "smalltalk --> __end__" in mermaid)

    # a chat UI edits the first message: new input at the checkpoint before it, a branch
    history = list(graph.get_state_history(config))
    before_first = [s for s in history if s.next == ("__start__",)][-1]
    edited = graph.invoke({"messages": [("user", "Where is my order 7?")]}, before_first.config)
    print(f"edited: {edited['messages'][-1].content} ({len(edited['messages'])} messages)")

    # with_config: a config under every run of the graph it returns
    desk_2 = graph.with_config({"configurable": {"thread_id": "desk-2"}})
    desk_2.invoke({"messages": [("user", "Hello there")]})
    other = graph.get_state({"configurable": {"thread_id": "desk-2"}}).values["messages"]
    print(f"desk-2: {other[-1].content}")
    if isinstance(llm, ScriptedChatModel):
        offered = [tool.name for tool in llm.requests[0].tools]
        print(f"tools the model was offered: {offered}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
