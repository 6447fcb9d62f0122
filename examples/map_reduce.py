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
"""

from __future__ import annotations

import operator
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel

from flowgraph import END, START, HumanMessage, Send, StateGraph, SystemMessage
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel, init_chat_model

DOCUMENTS = {
    "checkpoints": "Every step writes a msgpack checkpoint. A crashed run resumes from it.",
    "messages": "Messages merge by id. A retried step therefore never duplicates one.",
    "diagrams": "Any graph exports to Mermaid, DOT or SVG. Thread paths can be overlaid.",
}


class Digest(BaseModel):
    """The state: the input documents, the gathered summaries, the final report."""

    documents: dict[str, str] = {}
    summaries: Annotated[list[str], operator.add] = []
    """Each worker adds one line; the reducer concatenates them in Send order."""
    report: str = ""


def scripted_reply(messages: list[Any]) -> str:
    """The offline model: a summary is a document's first sentence; a report counts them."""
    task, text = messages[0].text, messages[-1].text
    if task.startswith("Summarise"):
        return text.split(". ")[0].rstrip(".") + "."
    return f"Release digest: {len(text.splitlines())} topics covered."


def pick_model() -> Any:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


MODEL = pick_model()
FINISH_ORDER: list[str] = []
"""The order the workers really finished in (list.append is atomic), for comparison."""


def fan_out(state: Digest) -> list[Send]:
    """Map: one Send per document; its argument is all the worker sees."""
    return [Send("summarise", {"title": t, "text": d}) for t, d in state.documents.items()]


def summarise(document: dict[str, str]) -> dict[str, list[str]]:
    """One worker. The first document is slowest, so the workers finish in reverse order."""
    position = list(DOCUMENTS).index(document["title"])
    time.sleep(0.1 * (len(DOCUMENTS) - position))
    reply = MODEL.invoke(
        [
            SystemMessage("Summarise the text in one sentence."),
            HumanMessage(document["text"]),
        ]
    )
    FINISH_ORDER.append(document["title"])
    return {"summaries": [f"{document['title']}: {reply.text}"]}


def report(state: Digest) -> dict[str, str]:
    """Reduce: one model call over every summary."""
    reply = MODEL.invoke(
        [
            SystemMessage("Write a one-line digest of these summaries."),
            HumanMessage("\n".join(state.summaries)),
        ]
    )
    return {"report": reply.text}


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "digest.db"
    graph = StateGraph(Digest)
    graph.add_node("summarise", summarise)
    graph.add_node("report", report)
    graph.add_conditional_edges(START, fan_out, ["summarise"])
    graph.add_edge("summarise", "report")  # runs once, after every worker of the step
    graph.add_edge("report", END)
    app = graph.compile(checkpointer=SQLiteCheckpointer(db))

    state = app.invoke({"documents": DOCUMENTS}, thread_id="digest")
    print(f"workers finished in this order: {', '.join(FINISH_ORDER)}")
    print("summaries, gathered in Send order:")
    for line in state.summaries:
        print(f"  {line}")
    print(f"report: {state.report}")

    print("\nCheckpoints, oldest first:")
    for snapshot in reversed(list(app.get_state_history("digest"))):
        nodes = ", ".join(snapshot.metadata.get("nodes", []))
        count = len(snapshot.values.summaries)
        print(f"  step {snapshot.step}: ran {nodes}; summaries: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
