"""Long-term memory: an agent that remembers a user's preferences across conversations.

Two threads with no messages in common: on Monday the user states their
preferences and the agent saves them with a tool; on Friday, in a new
thread, the agent looks them up before booking. The preferences live in a
long-term store (`flowgraph.store`), in the same SQLite file as the
checkpoints, under the namespace ("users", <user id>, "preferences").

Runs offline by default (a ScriptedChatModel plays the LLM); set
FLOWGRAPH_MODEL (and FLOWGRAPH_BASE_URL / FLOWGRAPH_API_KEY) for a real one.

    python examples/remember_preferences.py [path/to/app.db]

From the command line, two runs are two threads; the second remembers the first:

    flowgraph run examples/remember_preferences.py "I'm vegetarian and like window seats."
    flowgraph run examples/remember_preferences.py "Book me a flight to Lisbon on Friday."

`app` below is what `flowgraph run` (and `draw`) loads. It is compiled with a
long-term store, so the CLI runs it with the store at its own location:
the file (or URL) `--db` or FLOWGRAPH_DB names, default ./flowgraph.db,
beside the checkpoints. The tools receive that store through an
`InjectedStore` parameter, and the user they remember for through
`ToolRuntime.context` (`invoke(..., context=User("ada"))`; the CLI gives
none, so the default user).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from flowgraph import (
    CompiledGraph,
    HumanMessage,
    InjectedStore,
    ToolRuntime,
    create_react_agent,
    tool,
)
from flowgraph.checkpoint import open_checkpointer
from flowgraph.models import ScriptedChatModel, init_chat_model
from flowgraph.store import BaseStore, InMemoryStore, open_store


@dataclass(frozen=True)
class User:
    """Who the agent talks to this run: `invoke(..., context=User("ada"))`."""

    user_id: str = "ada"


def _namespace(runtime: ToolRuntime[User]) -> tuple[str, ...]:
    user = runtime.context or User()  # the CLI passes no context: the default user
    return ("users", user.user_id, "preferences")


@tool
def remember(
    topic: str,
    preference: str,
    store: Annotated[BaseStore, InjectedStore()],
    runtime: ToolRuntime[User],
) -> str:
    """Save a lasting preference of the user (diet, seat, language...).

    Args:
        topic: One word naming what the preference is about, e.g. "seat".
        preference: The preference itself, e.g. "window seat".
    """
    value = {"topic": topic.lower(), "preference": preference}
    store.put(_namespace(runtime), topic.lower(), value)
    return f"saved {topic}"


@tool
def recall(
    query: str, store: Annotated[BaseStore, InjectedStore()], runtime: ToolRuntime[User]
) -> str:
    """Look up the user's saved preferences that match a few words.

    Args:
        query: Words about what to look up, e.g. "seat diet".
    """
    found = store.search(_namespace(runtime), query=query)
    return "; ".join(f"{i.value['topic']}: {i.value['preference']}" for i in found) or "none"


HEARD = {"vegetarian": ("diet", "vegetarian"), "vegan": ("diet", "vegan")}
HEARD |= {"window": ("seat", "window seat"), "aisle": ("seat", "aisle seat")}
SAID = {"diet": "{} meal", "seat": "{}"}


def scripted_reply(messages: list[Any]) -> Any:
    """The offline model: saves the preferences it hears, recalls them before booking."""
    last = messages[-1]
    question = [m for m in messages if m.type == "human"][-1].text
    if last.type == "tool" and last.name == "remember":
        saved = [c.args for c in [m for m in messages if m.type == "ai"][-1].tool_calls]
        said = [SAID[a["topic"]].format(a["preference"]) + "s" for a in saved]
        return f"Noted: {' and '.join(said)} from now on."
    if last.type == "tool":  # what recall found: book with it
        trip = re.search(r"\bto ([A-Z]\w+)(?: on (\w+))?", question)
        where = f"{trip[1]} on {trip[2]}" if trip and trip[2] else trip[1] if trip else "it"
        found = dict(line.split(": ", 1) for line in last.text.split("; ") if ": " in line)
        said = [SAID[topic].format(found[topic]) for topic in ("seat", "diet") if topic in found]
        return f"Booked {where}: {', '.join(said) or 'no saved preferences'}."
    if "book" in question.lower():
        return {"tool_calls": [{"name": "recall", "args": {"query": "diet seat"}}]}
    heard = [HEARD[word] for word in HEARD if word in question.lower()]
    if heard:
        calls = [{"name": "remember", "args": {"topic": t, "preference": p}} for t, p in heard]
        return {"tool_calls": calls}
    return (
        "I am the offline stand-in for a model (set FLOWGRAPH_MODEL for a real one); tell me "
        'a preference ("I\'m vegetarian"), then, in another thread, "Book me a flight to Lisbon."'
    )


def pick_model() -> Any:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


def build_app(store: BaseStore) -> CompiledGraph:
    """The agent, its tools on the long-term store `store` (`compile(store=...)`)."""
    return create_react_agent(
        pick_model(),
        [remember, recall],
        system="You are a travel assistant. Save lasting preferences; recall them before booking.",
        store=store,
        context_schema=User,
    )


# the CLI swaps this in-memory store for the one at its --db location
app = build_app(InMemoryStore())


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "app.db"
    store = open_store(db)  # the same file holds the checkpoints
    agent = build_app(store).with_checkpointer(open_checkpointer(db))
    for thread, text in [
        ("monday", "I'm vegetarian, and I always want a window seat."),
        ("friday", "Book me a flight to Lisbon on Friday."),
    ]:
        print(f"[{thread}] user > {text}")
        turn = {"messages": [HumanMessage(text)]}
        for part in agent.stream(turn, thread_id=thread, context=User("ada"), mode="updates"):
            for message in part.data.get("messages", []):
                if message.type == "ai" and message.tool_calls:
                    for call in message.tool_calls:
                        print(f"  calls {call.name}({call.args})")
                elif message.type == "tool":
                    print(f"  {message.name} -> {message.text}")
                elif message.type == "ai":
                    print(f"[{thread}] agent > {message.text}")
    friday = agent.get_state("friday").values.messages
    print(f"\n'friday' holds {len(friday)} messages, none of 'monday'; the store in {db.name}:")
    for namespace in store.list_namespaces(("users",)):
        for item in sorted(store.search(namespace), key=lambda item: item.key):
            print(f"  {namespace} {item.key!r}: {item.value}")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
