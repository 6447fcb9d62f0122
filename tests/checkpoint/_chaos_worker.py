"""Subprocess target of the chaos suite (test_chaos.py): real processes, killed for real.

`python _chaos_worker.py serve` imports flowgraph once, prints READY, then
forks a child per JSON job read from stdin (or `children` of them), as
`_crash_worker.py` does, so a trial costs a fork, not an interpreter start.

The conversation is the path users take: a `ModelNode` over a scripted
model asks for two tools per turn (`send_mail`, `charge`), a `ToolNode`
runs them, `tools_condition` routes. Every node entry, model call and tool
side effect is appended to a log file (one `os.write` per line, O_APPEND),
which survives the SIGKILL and tells the test exactly what ran how often.

A job may name a kill point; the child SIGKILLs itself there:
- `before_node`: at the entry of its n-th node run;
- `in_tool`: inside its n-th tool call, after the call began, before its
  side effect is done;
- `after_tool`: after its n-th ToolNode returned (results stored by once,
  the step's checkpoint not yet written);
- `in_write`: n-th checkpoint write, from a timer `delay_us` after the
  write began (before, inside or after the store's commit).

Jobs (`mode`):
- `drive`: bring `threads` to `turns` finished turns, from whatever is stored.
- `race`: every child starts a run on one thread at `start_at`; reports WON or
  REFUSED with the time it took to be refused.
- `worker`: once the file `go` exists, loop over `threads` in a random order,
  advancing any that is not busy by one run, until all are finished.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from flowgraph import (
    END,
    START,
    AIMessage,
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
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel

_job = "-"


def say(*words: object) -> None:
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (" ".join(map(str, words)) + "\n").encode())


def open_store(job: dict[str, Any]) -> BaseCheckpointer:
    spec = job.get("store")
    if spec:
        cls = getattr(importlib.import_module(spec["module"]), spec["cls"])
        store: BaseCheckpointer = cls(*spec["args"], **spec["kwargs"])
    else:
        store = SQLiteCheckpointer(job["path"])
    return store


class Log:
    """Append-only event log shared by every process of a test."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def __call__(self, event: str, thread: str, detail: object = "") -> None:
        os.write(self.fd, f"{os.getpid()} {event} {thread} {detail}\n".encode())


class Killer:
    """Counts the events of one kind in this process and SIGKILLs it at the chosen one."""

    def __init__(self, spec: dict[str, Any] | None) -> None:
        self.point = spec["point"] if spec else None
        self.at = spec["at"] if spec else -1
        self.delay = spec.get("delay_us", 0) / 1e6 if spec else 0.0
        self.seen: dict[str, int] = {}
        self.lock = threading.Lock()

    def reached(self, point: str) -> bool:
        with self.lock:
            number = self.seen.get(point, 0)
            self.seen[point] = number + 1
        return point == self.point and number == self.at

    def check(self, point: str) -> None:
        if self.reached(point):
            die()


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(10)  # the signal is on its way


def question(k: int) -> str:
    return f"question {k}"


def turn_of(messages: list[Any]) -> int:
    return sum(1 for m in messages if m.type == "human") - 1


def expected_transcript(turns: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for k in range(turns):
        out += [
            ("human", question(k)),
            ("ai", f"calling tools for turn {k}"),
            ("tool", f"mailed user{k}"),
            ("tool", f"charged {k + 1}"),
            ("ai", f"answer {k}"),
        ]
    return out


def build_app(store: BaseCheckpointer, log: Log, killer: Killer, thread: str) -> Any:
    """agent (ModelNode) -> tools (ToolNode) -> agent -> END, per user turn."""

    def reply(messages: list[Any]) -> Any:
        k = turn_of(messages)
        log("model", thread, k)
        if messages[-1].type == "tool":
            return f"answer {k}"
        return {
            "content": f"calling tools for turn {k}",
            "tool_calls": [
                {"id": f"{thread}-{k}-mail", "name": "send_mail", "args": {"to": f"user{k}"}},
                {"id": f"{thread}-{k}-charge", "name": "charge", "args": {"amount": k + 1}},
            ],
        }

    def effect(name: str, call: str, result: str) -> str:
        log("begin", thread, call)
        killer.check("in_tool")
        log("done", thread, call)
        return result

    @tool
    def send_mail(to: str) -> str:
        """Send a mail."""
        k = int(to.removeprefix("user"))
        return effect("send_mail", f"{thread}-{k}-mail", f"mailed {to}")

    @tool
    def charge(amount: int) -> str:
        """Charge a card."""
        return effect("charge", f"{thread}-{amount - 1}-charge", f"charged {amount}")

    model_node = ModelNode(ScriptedChatModel(reply))
    tool_node = ToolNode([send_mail, charge], handle_errors=False)

    async def agent(state: MessagesState) -> Any:
        log("node", thread, "agent")
        killer.check("before_node")
        return await model_node(state)

    async def tools(state: MessagesState) -> Any:
        log("node", thread, "tools")
        killer.check("before_node")
        out = await tool_node(state)
        killer.check("after_tool")
        return out

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", tools)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=store)


def arm_writes(store: BaseCheckpointer, killer: Killer) -> None:
    """Make the chosen checkpoint write die `delay` after it begins (a timer thread)."""
    put = store.put

    def timed_put(*args: Any, **kwargs: Any) -> None:
        if killer.reached("in_write"):
            threading.Timer(killer.delay, die).start()
        put(*args, **kwargs)

    store.put = timed_put  # type: ignore[method-assign]


def advance(app: Any, thread: str, turns: int) -> bool:
    """One run that moves `thread` on (resume, or the next turn); False when it is done."""
    state = app.get_state(thread)
    humans = sum(1 for m in state.values.messages if m.type == "human")
    if state.next:
        app.invoke(None, thread_id=thread, run_id=f"{thread}-turn-{humans - 1}")
        return True
    if humans >= turns:
        return False
    message = HumanMessage(question(humans), id=f"{thread}-h{humans}")
    app.invoke({"messages": [message]}, thread_id=thread, run_id=f"{thread}-turn-{humans}")
    return True


def _drive(job: dict[str, Any]) -> None:
    store = open_store(job)
    killer = Killer(job.get("kill"))
    arm_writes(store, killer)
    log = Log(job["log"])
    for thread in job["threads"]:
        app = build_app(store, log, killer, thread)
        while advance(app, thread, job["turns"]):
            pass
    say(_job, "DONE")


def _race(job: dict[str, Any], child: int) -> None:
    store = open_store(job)
    log = Log(job["log"])
    thread = job["threads"][0]

    def slow(state: MessagesState) -> dict[str, Any]:
        log("node", thread, f"race {child}")
        time.sleep(job["hold_s"])
        return {"messages": [AIMessage(f"answer to {child}")]}

    g = StateGraph(MessagesState)
    g.add_node("slow", slow)
    g.add_edge(START, "slow")
    g.add_edge("slow", END)
    app = g.compile(checkpointer=store)
    time.sleep(max(0.0, job["start_at"] - time.time()))
    started = time.perf_counter()
    try:
        app.invoke({"messages": [HumanMessage(f"from {child}")]}, thread_id=thread)
        say(_job, "WON", child)
    except ConcurrentRunError as exc:
        say(_job, "REFUSED", f"{child} {time.perf_counter() - started:.6f} {exc.run_id}")


def _worker(job: dict[str, Any], child: int) -> None:
    store = open_store(job)
    log = Log(job["log"])
    killer = Killer(None)
    threads = list(job["threads"])
    apps = {t: build_app(store, log, killer, t) for t in threads}
    rng = random.Random(os.getpid())
    go = Path(job["go"])  # the test makes it once it knows every child's pid
    while not go.exists():
        time.sleep(0.001)
    runs = refused = 0
    while threads:
        rng.shuffle(threads)
        for thread in list(threads):
            try:
                if advance(apps[thread], thread, job["turns"]):
                    runs += 1
                else:
                    threads.remove(thread)
            except ConcurrentRunError:
                refused += 1
        time.sleep(rng.uniform(0, 0.002))
    say(_job, "RESULT", json.dumps({"child": child, "runs": runs, "refused": refused}))


def run_job(job: dict[str, Any], child: int) -> None:
    global _job
    _job = job["id"]
    say(_job, "PID", os.getpid())
    mode = job["mode"]
    if mode == "drive":
        _drive(job)
    elif mode == "race":
        _race(job, child)
    elif mode == "worker":
        _worker(job, child)
    else:
        raise ValueError(f"unknown job mode {mode!r}")


if __name__ == "__main__":
    if sys.argv[1:] != ["serve"]:
        sys.exit("usage: _chaos_worker.py serve")
    from _fork_serve import serve  # run as a script: this folder is on the path

    serve(run_job)
