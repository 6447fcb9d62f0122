"""A workflow written as plain functions: @entrypoint and @task (LangGraph's functional API).

`write_post` researches a topic from three angles at once (three tasks in
parallel), drafts a post from the notes (a task), asks an editor to approve
it with `interrupt()`, and publishes it. The thread's state is what the
entrypoint returned; `previous` is what it saved last time, so the thread
counts its published posts (`entrypoint.final(value=..., save=...)`).

Every task's result is stored with the step the moment it returns. When the
editor answers, the entrypoint runs again from its first line, but the
research and the draft come back from the checkpoint instead of running (and
paying for model calls) again. The same holds after a crash.

Runs offline with a scripted model; set FLOWGRAPH_MODEL (and FLOWGRAPH_BASE_URL /
FLOWGRAPH_API_KEY) to use a real one.

    python examples/functional_workflow.py [path/to/checkpoints.db]
    flowgraph run examples/functional_workflow.py "Streaming in flowgraph" --thread blog
    flowgraph resume blog --value '"approve"'

`write_post` below is what `flowgraph run` (and `draw`) loads: the prompt is
its input, and the text it returns is the answer. main() puts it on a SQLite
file of its own with `write_post.with_checkpointer(...)`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from flowgraph import (
    Command,
    HumanMessage,
    SystemMessage,
    entrypoint,
    get_stream_writer,
    interrupt,
    task,
)
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel, init_chat_model

ANGLES = ("history", "practice", "pitfalls")
RUNS: Counter[str] = Counter()
"""How often each task really ran (a task whose result was stored does not run)."""


def scripted_reply(messages: list[Any]) -> str:
    """The offline model: a note per angle; the draft strings the notes together."""
    instruction, text = messages[0].text, messages[-1].text
    if instruction.startswith("Write one sentence"):
        angle = instruction.split(" on the ", 1)[1].split(" of ", 1)[0]
        return f"{angle.capitalize()} of {text.lower()}."
    return " ".join(text.splitlines())


def pick_model() -> Any:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


MODEL = pick_model()


@task
def research(topic: str, angle: str) -> str:
    """One angle of the topic; the three calls run at once."""
    RUNS["research"] += 1
    get_stream_writer()(f"looking into the {angle}")
    time.sleep(0.2 + 0.1 * ANGLES.index(angle))  # slow sources: at once, 0.4 s instead of 0.9
    instruction = SystemMessage(f"Write one sentence on the {angle} of the topic.")
    return str(MODEL.invoke([instruction, HumanMessage(topic)]).text)


@task
def draft(notes: list[str]) -> str:
    """A post from the notes."""
    RUNS["draft"] += 1
    instruction = SystemMessage("Write a short post from these notes.")
    return str(MODEL.invoke([instruction, HumanMessage("\n".join(notes))]).text)


@entrypoint()
def write_post(topic: str, *, previous: Any = None) -> Any:
    """Research, draft, ask the editor, publish; `previous` is how many posts went out."""
    notes = [future.result() for future in [research(topic, angle) for angle in ANGLES]]
    text = draft(notes).result()
    verdict = interrupt({"approve this post?": text})
    published = previous or 0
    if verdict != "approve":
        return entrypoint.final(value=f"Not published: {verdict}", save=published)
    return entrypoint.final(value=f"Published post #{published + 1}: {text}", save=published + 1)


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "blog.db"
    blog = write_post.with_checkpointer(SQLiteCheckpointer(db))

    print("Writing about 'Streaming in flowgraph' (custom and updates streamed as they come):")
    started = time.perf_counter()
    for part in blog.stream("Streaming in flowgraph", thread_id="blog", mode=["custom", "updates"]):
        if part.mode == "custom":
            print(f"  {part.node} | {part.data}")
        elif part.node == "__interrupt__":
            print(f"  paused: {part.data[0].value}")
        else:
            print(f"  {part.node} -> {part.data}")
    print(f"the research tasks ran at once: {time.perf_counter() - started < 0.85}")
    print(f"tasks run so far: {dict(sorted(RUNS.items()))}")

    print("\nThe editor approves; the entrypoint runs again from its first line:")
    print(f"  {blog.invoke(Command(resume='approve'), thread_id='blog')}")
    print(f"tasks run after the resume: {dict(sorted(RUNS.items()))} (none again)")
    print(f"the thread's state is what it returned: {blog.get_state('blog').values[:18]!r}...")

    print("\nA second post on the same thread (previous = 1):")
    blog.invoke("Checkpoints in flowgraph", thread_id="blog")
    print(f"  {blog.invoke(Command(resume='approve'), thread_id='blog')[:18]}...")

    print("\nCheckpoints, oldest first:")
    for snapshot in reversed(list(blog.get_state_history("blog"))):
        source = snapshot.metadata.get("source")
        print(f"  step {snapshot.step}: {source:<5} next {snapshot.next or '(done)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
