"""A group chat: several people talk to one assistant, each message signed with a `name`.

A HumanMessage's `name` tells the speakers apart. It is stored with the
message, checkpointed, and sent to the model: in OpenAI's format it is the
`name` field of each user message, so the model knows who said what.

Runs offline with a scripted model; set FLOWGRAPH_MODEL to use a real one.

    python examples/group_chat.py [path/to/checkpoints.db]
    flowgraph run examples/group_chat.py --input \
        '{"messages": [{"role": "user", "content": "CI is flaky.", "name": "bob"}]}'

`app` below is what `flowgraph run` (and `draw`) loads; main() puts the same
app on a SQLite file of its own with `app.with_checkpointer(...)`. A plain
PROMPT on the command line works too, but carries no name.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from flowgraph import BaseMessage, HumanMessage, create_react_agent
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.messages import to_openai
from flowgraph.models import (
    ChatModelListener,
    ModelRequestEvent,
    ScriptedChatModel,
    init_chat_model,
)


class LastRequest(ChatModelListener):
    """Keeps the messages of the latest model call, whatever the model."""

    def __init__(self) -> None:
        self.messages: list[BaseMessage] = []

    def on_request(self, event: ModelRequestEvent) -> None:
        self.messages = list(event.messages)


def scripted_reply(messages: list[Any]) -> str:
    """The offline model greets everyone who has spoken, by name."""
    speakers = sorted({m.name.title() for m in messages if m.type == "human" and m.name})
    if not speakers:
        return "Thanks! Nobody has signed a message yet, so I cannot tell you apart (`name`)."
    last = messages[-1]
    who = f", {last.name.title()}" if last.name else ""
    return f"Thanks{who}! Heard so far from: {', '.join(speakers)}."


def pick_model(listener: ChatModelListener) -> Any:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model(listeners=[listener])
    return ScriptedChatModel(scripted_reply, listeners=[listener])


LAST_REQUEST = LastRequest()
# No checkpointer here: `flowgraph run` keeps threads in its own store (--db), main() in a file.
app = create_react_agent(
    pick_model(LAST_REQUEST), system="You moderate a team chat. Address people by name."
)


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "group.db"
    chat = app.with_checkpointer(SQLiteCheckpointer(db))
    thread = "standup"
    turns = [
        # two people may speak before the assistant answers: one step, two messages
        [
            HumanMessage("I finished the login page.", name="alice"),
            HumanMessage("I'm stuck on the flaky CI job.", name="bob"),
        ],
        [HumanMessage("Can someone pair with Bob on CI?", name="carol")],
    ]
    for messages in turns:
        chat.invoke({"messages": messages}, thread_id=thread)

    print("Transcript:")
    for message in chat.get_state(thread).values.messages:
        speaker = message.name or ("assistant" if message.type == "ai" else message.type)
        print(f"  {speaker:>9}: {message.text}")

    # What the model received on its last call, in OpenAI's wire format.
    print("\nLast request, as OpenAI messages:")
    for wire in to_openai(LAST_REQUEST.messages):
        print("  " + json.dumps(wire, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
