"""Subprocess target of the history checker (test_history.py, test_race_windows.py).

`python _history_worker.py serve` imports flowgraph once and forks a child
per job (see `_fork_serve.py`). Two kinds of job:

- `worker`: the loop a user writes who scales out (issue #28): over its
  threads in its own order, `get_state(t)`; if `snap.next`, `invoke(None)`;
  else, if fewer than `turns` turns are answered, send turn k (message id
  `<t>-u<k>`); `ConcurrentRunError` means someone else has it: skip. A
  worker may SIGKILL itself at its n-th node run (`kill_at_node`).
- `act`: one call (`send`, `resume`), for the named window tests.

Every process appends what it was told and did to one log (one `os.write`
a line, O_APPEND, so a SIGKILL leaves whole lines): `send`/`accepted`/
`refused` for each input, `resume`/`resumed`, each node run with the state
it ran on (message count and last id), each tool side effect. The checker
(`_history.py`) proves the history from that log and the store alone.

Storage calls can be widened (`_windows.widen`): `jitter` for the trials,
`gates` for one exact ordering. `no_redelivery` switches off the rule that
an input already in the thread is not run again, so a test can show that
the checker catches what it guards against.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

from flowgraph import (
    START,
    ConcurrentRunError,
    HumanMessage,
    MessagesState,
    ModelNode,
    StateGraph,
    ToolNode,
    tool,
    tools_condition,
)
from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.models import ScriptedChatModel

sys.path.insert(0, str(Path(__file__).parent))
from _chaos_worker import open_store as open_chaos_store  # this folder is on the path
from _chaos_worker import say
from _windows import wait_for, widen

_job = "-"


def open_store(job: dict[str, Any]) -> BaseCheckpointer:
    store = open_chaos_store(job)
    if job.get("lease_s"):
        store.lease_s = float(job["lease_s"])
    return store


class Log:
    """The append-only event log every process of a test shares."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def __call__(self, event: str, thread: str, *detail: object) -> None:
        words = " ".join(map(str, detail))
        os.write(self.fd, f"{os.getpid()} {event} {thread} {words}\n".encode())


def turn_text(k: int) -> str:
    return f"turn {k}"


def input_id(thread: str, k: int) -> str:
    return f"{thread}-u{k}"


def call_id(thread: str, k: int) -> str:
    return f"{thread}-{k}-look"


def asked_turn(messages: list[Any]) -> int:
    """The turn the last human message asks (the model answers that one)."""
    last = next(m for m in reversed(messages) if m.type == "human")
    return int(last.text.split()[-1])


def answered(messages: list[Any]) -> int:
    return sum(1 for m in messages if m.type == "ai" and not m.tool_calls)


def build_app(store: BaseCheckpointer, log: Log, thread: str, killer: Any = None) -> Any:
    """agent (ModelNode) -> tools (ToolNode) -> agent -> END: one tool call a turn."""

    def reply(messages: list[Any]) -> Any:
        k = asked_turn(messages)
        if messages[-1].type == "tool":
            return f"answer {k}"
        call = {"id": call_id(thread, k), "name": "look", "args": {"k": k}}
        return {"content": "", "tool_calls": [call]}

    @tool
    def look(k: int) -> str:
        """Look turn k up (the side effect the checker counts)."""
        log("effect", thread, call_id(thread, k))
        return f"result {k}"

    model_node = ModelNode(ScriptedChatModel(reply))
    tool_node = ToolNode([look])

    def entered(node: str, state: MessagesState) -> None:
        messages = state.messages
        log("node", thread, node, len(messages), messages[-1].id if messages else "-")
        if killer is not None:
            killer()

    async def agent(state: MessagesState) -> Any:
        entered("agent", state)
        return await model_node(state)

    async def tools(state: MessagesState) -> Any:
        entered("tools", state)
        return await tool_node(state)

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", tools)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=store)


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(10)  # the signal is on its way


def prepare(job: dict[str, Any], child: int) -> tuple[BaseCheckpointer, Log]:
    if job.get("no_redelivery"):
        from flowgraph.graph._thread import opening

        opening._redelivered = lambda *args: False  # type: ignore[attr-defined]
    store = open_store(job)
    seed = job.get("seed", 0) * 1000 + child
    jitter = job.get("jitter")
    widen(
        store,
        jitter=(jitter[0], jitter[1], seed) if jitter else None,
        gates=job.get("gates"),
    )
    return store, Log(job["log"])


def send(app: Any, log: Log, thread: str, k: int, text: str | None = None) -> str:
    """Send turn k; the outcome as the log records it."""
    message_id = input_id(thread, k)
    log("send", thread, message_id)
    try:
        app.invoke(
            {"messages": [HumanMessage(text or turn_text(k), id=message_id)]}, thread_id=thread
        )
    except ConcurrentRunError as exc:
        log("refused", thread, message_id)
        return f"refused {exc.run_id}"
    log("accepted", thread, message_id)
    return "accepted"


def resume(app: Any, log: Log, thread: str) -> str:
    log("resume", thread)
    try:
        app.invoke(None, thread_id=thread)
    except ConcurrentRunError as exc:
        log("refused", thread, "resume")
        return f"refused {exc.run_id}"
    log("resumed", thread)
    return "resumed"


def _worker(job: dict[str, Any], child: int) -> None:
    store, log = prepare(job, child)
    kill_at = job.get("kill_at_node") if child == job.get("kill_child", 0) else None
    node_runs = 0

    def killer() -> None:
        nonlocal node_runs
        node_runs += 1
        if kill_at is not None and node_runs == kill_at:
            die()

    threads = list(job["threads"])
    apps = {t: build_app(store, log, t, killer) for t in threads}
    rng = random.Random(job.get("seed", 0) * 1000 + child)
    rng.shuffle(threads)
    go = Path(job["go"])  # made once the test knows every child's pid
    while not go.exists():
        time.sleep(0.001)
    runs = skipped = 0
    while threads:
        for thread in list(threads):
            app = apps[thread]
            try:
                snap = app.get_state(thread)
                messages = snap.values.messages if snap.values is not None else []
                if snap.next:
                    outcome = resume(app, log, thread)
                elif answered(messages) < job["turns"]:
                    outcome = send(app, log, thread, answered(messages))
                else:
                    threads.remove(thread)
                    continue
            except ConcurrentRunError:  # get_state does not raise it; kept for the loop's shape
                outcome = "refused"
            runs += outcome in ("accepted", "resumed")
            skipped += outcome.startswith("refused")
    say(_job, "RESULT", json.dumps({"child": child, "runs": runs, "skipped": skipped}))


def _act(job: dict[str, Any], child: int) -> None:
    store, log = prepare(job, child)
    thread = job["thread"]
    hook = None
    if "block_node" in job:  # stop at that node run until the test says go
        gate = next(iter(job["gates"].values())) + "-node"
        entered = iter(range(10**9))

        def hook() -> None:
            if next(entered) == job["block_node"]:
                Path(gate + ".at").touch()
                wait_for(Path(gate + ".go"))

    app = build_app(store, log, thread, hook)
    action = job["action"]
    if action == "send":
        outcome = send(app, log, thread, job["k"], job.get("text"))
    elif action == "resume":
        outcome = resume(app, log, thread)
    else:
        raise ValueError(f"unknown action {action!r}")
    say(_job, "RESULT", outcome)


def run_job(job: dict[str, Any], child: int) -> None:
    global _job
    _job = job["id"]
    say(_job, "PID", os.getpid())
    if job["mode"] == "worker":
        _worker(job, child)
    elif job["mode"] == "act":
        _act(job, child)
    else:
        raise ValueError(f"unknown job mode {job['mode']!r}")


if __name__ == "__main__":
    if sys.argv[1:] != ["serve"]:
        sys.exit("usage: _history_worker.py serve")
    from _fork_serve import serve

    serve(run_job)
