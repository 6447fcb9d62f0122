"""Serving an agent over HTTP: the LangGraph Server API, driven by LangGraph's own client.

The agent below books meetings; booking needs a person's approval, so the
graph pauses (`interrupt`) before the tool runs. It is served with
`flowgraph.server` on a free local port, and the official `langgraph-sdk`
client (`pip install langgraph-sdk`) talks to it exactly as it talks to
LangGraph Server: it streams the reply token by token (`messages-tuple`),
sees the thread stop at the approval question, resumes it with
`command={"resume": ...}`, reads the thread's state and history, and keeps a
note about the person in the server's long-term store (`client.store`).

From a shell the same app is served with:

    flowgraph serve agent=examples/serve_agent.py:app --db meetings.db

Runs offline with a scripted model; set FLOWGRAPH_MODEL (and FLOWGRAPH_BASE_URL /
FLOWGRAPH_API_KEY) to use a real one.

    python examples/serve_agent.py [path/to/checkpoints.db]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from flowgraph import (
    END,
    START,
    AIMessage,
    MessagesState,
    ModelNode,
    ScriptedChatModel,
    StateGraph,
    ToolNode,
    init_chat_model,
    interrupt,
    tool,
    tools_condition,
)
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer


@tool
def book_meeting(who: str, when: str) -> str:
    """Put a meeting in the calendar.

    Args:
        who: Whom to meet.
        when: The day and time.
    """
    return f"Booked: {who}, {when} (confirmation M-42)"


def scripted(messages: list[Any]) -> Any:
    last = messages[-1]
    if last.type == "human":
        return {
            "tool_calls": [{"name": "book_meeting", "args": {"who": "Ada", "when": "Friday 10:00"}}]
        }
    return f"Done. {last.text}."


def approve(state: MessagesState) -> dict[str, Any]:
    """Ask a person before any tool runs; the answer comes with the resume."""
    last = state.messages[-1]  # the model's reply: tools_condition sent the run here
    calls = [f"{c.name}({c.args})" for c in last.tool_calls] if isinstance(last, AIMessage) else []
    answer = interrupt({"question": "Run these tool calls?", "calls": calls})
    if answer != "yes":
        raise ValueError("declined")  # this example only approves
    return {}


model = init_chat_model() if os.environ.get("FLOWGRAPH_MODEL") else ScriptedChatModel(scripted)
graph = StateGraph(MessagesState)
graph.add_node("agent", ModelNode(model, tools=[book_meeting]))
graph.add_node("approve", approve)
graph.add_node("tools", ToolNode([book_meeting]))
graph.add_edge(START, "agent")
graph.add_conditional_edges("agent", tools_condition, {"tools": "approve", END: END})
graph.add_edge("approve", "tools")
graph.add_edge("tools", "agent")
app = graph.compile()


def main(db: Path) -> None:
    try:
        from langgraph_sdk import get_sync_client
    except ImportError:
        print("This example drives the server with LangGraph's client: pip install langgraph-sdk")
        return
    from flowgraph.server import running

    with (
        running({"agent": app}, checkpointer=SQLiteCheckpointer(db)) as url,
        get_sync_client(url=url, api_key=None) as client,
    ):
        print(f"serving on {url}: {[a['graph_id'] for a in client.assistants.search()]}")
        thread = client.threads.create(metadata={"user": "ada"})
        thread_id = thread["thread_id"]
        question: dict[str, Any] = {
            "messages": [{"role": "user", "content": "Book a meeting with Ada on Friday"}]
        }
        for part in client.runs.stream(thread_id, "agent", input=question, stream_mode="updates"):
            if part.event == "updates":
                for node, update in part.data.items():
                    wrote = sorted(update) if isinstance(update, dict) else "a pause"
                    print(f"  {node} -> {wrote}")
        status = client.threads.get(thread_id)["status"]
        waiting = client.threads.get_state(thread_id)["interrupts"][0]["value"]
        print(f"thread {status}: {waiting['question']} {waiting['calls']}")

        tokens = []
        for part in client.runs.stream(
            thread_id, "agent", command={"resume": "yes"}, stream_mode="messages-tuple"
        ):
            if part.event == "messages" and part.data[0]["type"] == "AIMessageChunk":
                tokens.append(part.data[0]["content"])
        print(f"streamed {len(tokens)} tokens: {''.join(tokens)}")
        values = client.threads.get_state(thread_id)["values"]
        assert isinstance(values, dict)  # a graph's state (the SDK also allows a list)
        print(f"thread {client.threads.get(thread_id)['status']}, "
              f"{len(values['messages'])} messages, "
              f"{len(client.threads.get_history(thread_id, limit=100))} checkpoints")  # fmt: skip
        print(f"runs: {[r['status'] for r in client.runs.list(thread_id)]}")

        # memory that outlives the thread: the server's long-term store
        client.store.put_item(["people", "ada"], "meetings", {"prefers": "mornings"})
        notes = client.store.search_items(["people"])["items"]
        print(f"store: {[(n['namespace'], n['key'], n['value']) for n in notes]}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp) / "meetings.db")
