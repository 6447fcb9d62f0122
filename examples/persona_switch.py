"""Switch persona mid-conversation: a friendly chat assistant or a strict code reviewer.

A Router looks at the last user message and writes the chosen persona to the
state; PersonaSwitch then makes messages[0] that persona's system message --
replaced in place (same position, same id), never a second system message.
The switch is an ordinary step, so it is a checkpoint you can find in the
history.

Runs offline with a scripted model; set FLOWGRAPH_MODEL to use a real one.

    python examples/persona_switch.py [path/to/checkpoints.db]
    flowgraph run examples/persona_switch.py "Please review: def f(n): return 10 / n"

`app` below is what `flowgraph run` (and `draw`) loads; main() puts the same
app on a SQLite file of its own with `app.with_checkpointer(...)`.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from flowgraph import END, START, HumanMessage, MessagesState, StateGraph
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel, init_chat_model
from flowgraph.nodes import ModelNode, PersonaSwitch, Router
from flowgraph.prompts import PromptTemplate, SystemPromptTemplate

PERSONAS: dict[str, str | PromptTemplate] = {
    # a template is rendered from the state's fields ({user_name})
    "friendly": SystemPromptTemplate("You are a friendly assistant chatting with {user_name}."),
    "code_reviewer": "You are a strict code reviewer: point out every bug, be terse.",
}


class ChatState(MessagesState):
    persona: str = "friendly"
    user_name: str = "Ada"


def wants_review(state: ChatState) -> bool:
    last = state.messages[-1].text.lower()
    return "review" in last or "def " in last


def scripted_reply(messages: list[Any]) -> str:
    """The offline model answers in the voice of whatever system message it is sent."""
    if "code reviewer" not in messages[0].text:
        return f"Happy to help! ({len(messages)} messages so far)"
    code, remarks = messages[-1].text, []
    if divisor := re.search(r"/\s*(\w+)", code):
        remarks.append(f"Bug: division by zero when {divisor[1]} == 0.")
    if "def " in code and "->" not in code:
        remarks.append("Missing type hints.")
    if name := re.search(r"def (\w)\(", code):
        remarks.append(f"Rename `{name[1]}`.")
    return " ".join(remarks) or "No bugs found; ship it."


def pick_model() -> Any:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


graph = StateGraph(ChatState)
# key="persona": the router is a node writing its choice to state.persona
graph.add_node("triage", Router({"code_reviewer": wants_review}, "friendly", key="persona"))
graph.add_node("persona", PersonaSwitch(PERSONAS))
graph.add_node("agent", ModelNode(pick_model()))  # no system=: the persona is sent
graph.add_edge(START, "triage").add_edge("triage", "persona")
graph.add_edge("persona", "agent").add_edge("agent", END)
# No checkpointer here: `flowgraph run` keeps threads in its own store (--db), main() in a file.
app = graph.compile()


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "persona.db"
    chat = app.with_checkpointer(SQLiteCheckpointer(db))

    thread = "persona-demo"
    turns = [
        "Hi! How are you today?",
        "Please review: def f(n): return 10 / n",
        "Thanks, that was useful!",
    ]
    system_ids = set()
    state = ChatState()  # each turn's result replaces it
    for text in turns:
        state = chat.invoke({"messages": [HumanMessage(text, name="ada")]}, thread_id=thread)
        system = state.messages[0]
        system_ids.add(system.id)
        print(f"ada   > {text}")
        print(f"        [{state.persona}] messages[0] id={system.id}: {system.text!r}")
        print(f"agent > {state.messages[-1].text}\n")

    # Still exactly one system message, first, after three turns and two switches.
    systems = [i for i, m in enumerate(state.messages) if m.type == "system"]
    print(f"system messages at positions {systems} of {len(state.messages)}")
    print(f"system message ids over three turns: {len(system_ids)} distinct (replaced in place)")

    # Each switch is a checkpoint written by the "persona" node (oldest first).
    print("persona checkpoints:")
    for snapshot in reversed(list(chat.get_state_history(thread))):
        if snapshot.metadata.get("nodes") == ["persona"]:
            values = snapshot.values
            print(f"  step {snapshot.step:>2}: {values.persona:<13} {values.messages[0].text!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
