"""Long-term memory: an agent that remembers a user's preferences across conversations.

Two threads with no messages in common: on Monday the user states their
preferences and the agent saves them with a tool; on Friday, in a new
thread, the agent looks them up before booking. The preferences live in a
long-term store (`flowgraph.store`), in the same SQLite file as the
checkpoints, under the namespace ("users", <user id>, "preferences").

Runs offline by default (a ScriptedChatModel plays the LLM); set
FLOWGRAPH_MODEL (and FLOWGRAPH_BASE_URL / FLOWGRAPH_API_KEY) for a real one.

    python examples/remember_preferences.py [path/to/app.db]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from flowgraph import HumanMessage, Tool, create_react_agent, tool
from flowgraph.checkpoint import open_checkpointer
from flowgraph.models import ScriptedChatModel, init_chat_model
from flowgraph.store import BaseStore, open_store


def preference_tools(store: BaseStore, user_id: str) -> list[Tool]:
    """Tools that read and write one user's preferences in the long-term store."""
    namespace = ("users", user_id, "preferences")

    @tool
    def remember(topic: str, preference: str) -> str:
        """Save a lasting preference of the user (diet, seat, language...).

        Args:
            topic: One word naming what the preference is about, e.g. "seat".
            preference: The preference itself, e.g. "window seat".
        """
        store.put(namespace, topic.lower(), {"topic": topic.lower(), "preference": preference})
        return f"saved {topic}"

    @tool
    def recall(query: str) -> str:
        """Look up the user's saved preferences that match a few words.

        Args:
            query: Words about what to look up, e.g. "seat diet".
        """
        found = store.search(namespace, query=query)
        return "; ".join(f"{i.value['topic']}: {i.value['preference']}" for i in found) or "none"

    return [remember, recall]


def pick_model() -> object:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(
        [
            {
                "tool_calls": [
                    {"name": "remember", "args": {"topic": "diet", "preference": "vegetarian"}},
                    {"name": "remember", "args": {"topic": "seat", "preference": "window seat"}},
                ]
            },
            "Noted: vegetarian meals and window seats from now on.",
            {"tool_calls": [{"name": "recall", "args": {"query": "vegetarian diet seat"}}]},
            "Booked Lisbon on Friday: window seat, vegetarian meal.",
        ]
    )


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "app.db"
    store = open_store(db)  # the same file holds the checkpoints
    app = create_react_agent(
        pick_model(),  # type: ignore[arg-type]  # a ChatModel either way
        preference_tools(store, "ada"),
        system="You are a travel assistant. Save lasting preferences; recall them before booking.",
        checkpointer=open_checkpointer(db),
    )
    for thread, text in [
        ("monday", "I'm vegetarian, and I always want a window seat."),
        ("friday", "Book me a flight to Lisbon on Friday."),
    ]:
        print(f"[{thread}] user > {text}")
        for part in app.stream({"messages": [HumanMessage(text)]}, thread_id=thread):
            for message in part.data.get("messages", []):
                if message.type == "ai" and message.tool_calls:
                    for call in message.tool_calls:
                        print(f"  calls {call.name}({call.args})")
                elif message.type == "tool":
                    print(f"  {message.name} -> {message.text}")
                elif message.type == "ai":
                    print(f"[{thread}] agent > {message.text}")
    friday = app.get_state("friday").values.messages
    print(f"\n'friday' holds {len(friday)} messages, none of 'monday'; the store in {db.name}:")
    for namespace in store.list_namespaces(("users",)):
        for item in sorted(store.search(namespace), key=lambda item: item.key):
            print(f"  {namespace} {item.key!r}: {item.value}")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
