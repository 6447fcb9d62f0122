"""Map-reduce: one worker per document with Send, gathered by a reducer, then one report.

A conditional edge returns a list of Send("summarise", document): each Send
starts its own task with the document as its input (not the state), and all
of them run concurrently in one step. Their updates to `summaries` are
merged by the field's reducer (operator.add) in Send order -- whichever
worker finishes first -- so the result is the same run after run. The next
step, "report", sees every summary at once.

Runs offline with a scripted model; set FLOWGRAPH_MODEL (and FLOWGRAPH_BASE_URL /
FLOWGRAPH_API_KEY) to use a real one.

    python examples/map_reduce.py [path/to/checkpoints.db]
    flowgraph run examples/map_reduce.py "$(cat notes.txt)"    # a worker per paragraph
    flowgraph run examples/map_reduce.py --input '{"documents": {"a": "...", "b": "..."}}'

`app` below is what `flowgraph run` (and `draw`) loads; main() puts the same
app on a SQLite file of its own with `app.with_checkpointer(...)`. A prompt
is split into documents: its paragraphs, or its sentences if it has one;
the report is also the answer, an AI message.
"""

from __future__ import annotations

import operator
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from flowgraph import (
    END,
    START,
    AIMessage,
    HumanMessage,
    MessagesState,
    Send,
    StateGraph,
    SystemMessage,
)
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel, init_chat_model

DOCUMENTS = {
    "checkpoints": "Every step writes a msgpack checkpoint. A crashed run resumes from it.",
    "messages": "Messages merge by id. A retried step therefore never duplicates one.",
    "diagrams": "Any graph exports to Mermaid, DOT or SVG. Thread paths can be overlaid.",
}


class Digest(MessagesState):
    """The state: the input documents, the gathered summaries, the final report."""

    documents: dict[str, str] = Field(default_factory=dict)
    summaries: Annotated[list[str], operator.add] = Field(default_factory=list)
    """Each worker adds one line; the reducer concatenates them in Send order."""
    report: str = ""


def scripted_reply(messages: list[Any]) -> str:
    """The offline model: a summary is a text's first sentence; a report strings them together."""
    task, text = messages[0].text, messages[-1].text
    if task.startswith("Summarise"):
        first = re.split(r"(?<=[.!?])\s+", text.strip())[0]
        return first if first.endswith((".", "!", "?")) else first + "."
    lines = text.splitlines()
    topics = f"{len(lines)} topic{'s' if len(lines) != 1 else ''}"
    return f"Digest of {topics}: " + " ".join(line.partition(": ")[2] for line in lines)


def pick_model() -> Any:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


MODEL = pick_model()
FINISH_ORDER: list[str] = []
"""The order the workers really finished in (list.append is atomic), for comparison."""


def documents_of(state: Digest) -> dict[str, str]:
    """The documents given, or a new prompt's paragraphs (sentences, if it has one)."""
    if not state.messages or state.messages[-1].type != "human":
        return state.documents
    text = state.messages[-1].text.strip()
    parts = re.split(r"\n\s*\n", text)
    if len(parts) == 1:
        parts = re.split(r"(?<=[.!?])\s+", text)
    return {f"part {i}": part for i, part in enumerate(parts, 1)}


def fan_out(state: Digest) -> list[Send]:
    """Map: one Send per document; its argument is all the worker sees."""
    documents = documents_of(state)
    return [
        Send("summarise", {"title": title, "text": text, "slowness": len(documents) - i})
        for i, (title, text) in enumerate(documents.items())
    ]


def summarise(document: dict[str, Any]) -> dict[str, list[str]]:
    """One worker. The first document is slowest, so the workers finish in reverse order."""
    time.sleep(0.1 * document["slowness"])
    reply = MODEL.invoke(
        [
            SystemMessage("Summarise the text in one sentence."),
            HumanMessage(document["text"]),
        ]
    )
    FINISH_ORDER.append(document["title"])
    return {"summaries": [f"{document['title']}: {reply.text}"]}


def report(state: Digest) -> dict[str, Any]:
    """Reduce: one model call over every summary; also the answer to the conversation."""
    reply = MODEL.invoke(
        [
            SystemMessage("Write a one-line digest of these summaries."),
            HumanMessage("\n".join(state.summaries)),
        ]
    )
    return {"report": reply.text, "messages": [AIMessage(reply.text)]}


graph = StateGraph(Digest)
graph.add_node("summarise", summarise)
graph.add_node("report", report)
graph.add_conditional_edges(START, fan_out, ["summarise"])
graph.add_edge("summarise", "report")  # runs once, after every worker of the step
graph.add_edge("report", END)
# No checkpointer here: `flowgraph run` keeps threads in its own store (--db), main() in a file.
app = graph.compile()


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "digest.db"
    digest = app.with_checkpointer(SQLiteCheckpointer(db))

    state = digest.invoke({"documents": DOCUMENTS}, thread_id="digest")
    print(f"workers finished in this order: {', '.join(FINISH_ORDER)}")
    print("summaries, gathered in Send order:")
    for line in state.summaries:
        print(f"  {line}")
    print(f"report: {state.report}")

    print("\nCheckpoints, oldest first:")
    for snapshot in reversed(list(digest.get_state_history("digest"))):
        nodes = ", ".join(snapshot.metadata.get("nodes", []))
        count = len(snapshot.values.summaries)
        print(f"  step {snapshot.step}: ran {nodes}; summaries: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
