"""Switch persona mid-conversation: a friendly chat assistant or a strict code reviewer.

A Router looks at the last user message and writes the chosen persona to the
state; PersonaSwitch then makes messages[0] that persona's system message --
replaced in place (same position, same id), never a second system message.
The switch is an ordinary step, so it is a checkpoint you can find in the
history.

Runs offline with a scripted model; set FLOWGRAPH_MODEL to use a real one.

    python examples/persona_switch.py [path/to/checkpoints.db]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from flowgraph import END, START, HumanMessage, MessagesState, StateGraph
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel, init_chat_model
from flowgraph.nodes import ModelNode, PersonaSwitch, Router
from flowgraph.prompts import SystemPromptTemplate

PERSONAS = {
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


def scripted_reply(messages: list) -> str:
    """The offline model answers in the voice of whatever system message it is sent."""
    if "code reviewer" in messages[0].text:
        return "Bug: division by zero when n == 0. Missing type hints. Rename `f`."
    return f"Happy to help! ({len(messages)} messages so far)"


def pick_model() -> object:
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "persona.db"
    graph = StateGraph(ChatState)
    # key="persona": the router is a node writing its choice to state.persona
    graph.add_node("triage", Router({"code_reviewer": wants_review}, "friendly", key="persona"))
    graph.add_node("persona", PersonaSwitch(PERSONAS))
    model = pick_model()
    graph.add_node("agent", ModelNode(model))  # type: ignore[arg-type]  # no system=: persona is sent
    graph.add_edge(START, "triage").add_edge("triage", "persona")
    graph.add_edge("persona", "agent").add_edge("agent", END)
    app = graph.compile(checkpointer=SQLiteCheckpointer(db))

    thread = "persona-demo"
    turns = [
        "Hi! How are you today?",
        "Please review: def f(n): return 10 / n",
        "Thanks, that was useful!",
    ]
    system_ids = set()
    for text in turns:
        state = app.invoke({"messages": [HumanMessage(text, name="ada")]}, thread_id=thread)
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
    for snapshot in reversed(list(app.get_state_history(thread))):
        if snapshot.metadata.get("nodes") == ["persona"]:
            values = snapshot.values
            print(f"  step {snapshot.step:>2}: {values.persona:<13} {values.messages[0].text!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
