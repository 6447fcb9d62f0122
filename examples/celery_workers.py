"""Many workers on one store with Celery: the web process enqueues, any number of workers run.

Deployment (every machine has this file and the same settings):

    # workers, on as many machines as you like
    export FLOWGRAPH_BROKER_URL=redis://broker-host:6379/1
    export FLOWGRAPH_DB=postgresql://user@db-host/app      # the store all workers share
    celery -A celery_workers worker --pool=prefork --concurrency=4

    # the web process: enqueue_run(run, thread_id, input) and return at once

Run as a script with FLOWGRAPH_BROKER_URL set, it plays both parts on this
machine: it starts a worker (SQLite store, the path given as argument),
enqueues three conversations and prints them when the worker is done.
Without a broker it prints these instructions and exits.

`flowgraph run examples/celery_workers.py "CI is flaky."` runs the same graph
in the CLI's own process (no broker, no worker): the module's only graph,
`graph`, is what it loads. Importing this file starts nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from celery import Celery  # type: ignore[import-untyped]  # celery ships no type hints

from flowgraph import END, START, AIMessage, MessagesState, StateGraph
from flowgraph.checkpoint import open_checkpointer
from flowgraph.integrations.celery import enqueue_run, make_thread_task

BROKER = os.environ.get("FLOWGRAPH_BROKER_URL")


def reply(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f"Noted: {state.messages[-1].text}")]}


# The graph is built here but compiled in each worker process, with its own connection to
# the store named by $FLOWGRAPH_DB (or make_thread_task(..., store=URL)).
graph = StateGraph(MessagesState)
graph.add_node("reply", reply)
graph.add_edge(START, "reply")
graph.add_edge("reply", END)

celery_app = Celery("flowgraph-example", broker=BROKER or "memory://")
run = make_thread_task(celery_app, "celery_workers:graph")


def main(db: str) -> None:
    if not BROKER:
        print("No broker: set FLOWGRAPH_BROKER_URL (e.g. redis://localhost:6379/1) to run this.")
        print(__doc__)
        return
    here = Path(__file__).resolve().parent
    env = {**os.environ, "FLOWGRAPH_DB": db}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "celery_workers", "worker", "-c", "2"],
        cwd=here,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        users = {"alice": "I finished the login page.", "bob": "CI is flaky.", "carol": "Hi!"}
        for user, text in users.items():
            enqueue_run(run, f"chat-{user}", {"messages": [{"role": "user", "content": text}]})
        app = graph.compile(checkpointer=open_checkpointer(db))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            states = [app.get_state(f"chat-{user}") for user in users]
            if all(s.checkpoint_id and not s.next for s in states):
                break
            time.sleep(0.2)
        for user in users:
            messages = app.get_state(f"chat-{user}").values.messages
            print(f"chat-{user}: " + " | ".join(m.text for m in messages))
    finally:
        worker.terminate()
        worker.wait(timeout=60)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(tempfile.mkdtemp()) / "chat.db"))
