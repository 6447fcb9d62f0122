"""Small graphs the checkpoint tests share."""

from __future__ import annotations

from typing import Any

from flowgraph import END, START, AIMessage, MessagesState, StateGraph
from flowgraph.checkpoint.base import BaseCheckpointer


def chat_app(store: BaseCheckpointer) -> Any:
    """One node answering each user message with a reply numbered by the history's length."""

    def agent(state: MessagesState) -> dict[str, object]:
        return {"messages": [AIMessage(f"reply {len(state.messages)}")]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    return g.compile(checkpointer=store)
