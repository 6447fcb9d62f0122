"""Subprocess target of the crash and multi-process tests (run as a script, or imported).

`python _crash_worker.py serve` imports flowgraph once, prints READY, then
reads one JSON job per line from stdin and forks a child per job (or
`children` of them), so every trial is a real process that starts in a
millisecond. A child prints `<job> PID <pid>` first, then markers the test
waits for before it sends SIGKILL; the server prints `<job> EXIT <status>`
per child and `<job> ALLDONE` when all have ended.

Jobs (`mode`):
- `run`: run the tool-calling conversation of `build_app` on a SQLite file;
  it may pause inside a node (`pause_node`, `pause_turn`) or inside the
  checkpoint transaction of a step (`pause_step`) after printing IN_NODE /
  IN_TX, so the test can kill it exactly there; `big` pads AI messages so
  writes take long enough for random kills to land in them.
- `resume`: open the file and finish the thread (`invoke(None)`, or the
  input when nothing was stored).
- `cas`: race other children to extend one thread's head with hand-made
  records through the protocol, and report wins and losses.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import random
import sys
import time
from collections.abc import Iterator, Mapping
from typing import Any

from flowgraph import END, START, AIMessage, HumanMessage, MessagesState, StateGraph, ToolMessage
from flowgraph.checkpoint.base import CheckpointRecord, new_checkpoint_id
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.errors import ConcurrentRunError
from flowgraph.messages import ToolCall

TURNS = 4
"""Tool rounds of the conversation: each is an agent step, then two tools in parallel."""
PAUSE_SECONDS = 30.0
"""How long a paused child waits to be killed before giving up."""

_job = "-"


def say(*words: object) -> None:
    """One line to stdout in one write: a child killed mid-line cannot garble the next one."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (" ".join(map(str, words)) + "\n").encode())


def _pause(marker: str, *detail: object) -> None:
    say(_job, marker, *detail)
    time.sleep(PAUSE_SECONDS)
    say(_job, "NOT_KILLED")
    os._exit(3)


# -- the conversation ---------------------------------------------------------------


def start_input() -> dict[str, Any]:
    return {"messages": [HumanMessage("start", id="human-0")]}


def expected_transcript(big: int = 0) -> list[tuple[str, str]]:
    """(type, text) of every message of a finished thread, in order."""
    pad = "x" * big
    out = [("human", "start")]
    for k in range(TURNS):
        out += [("ai", f"turn {k}{pad}"), ("tool", f"a result {k}"), ("tool", f"b result {k}")]
    out.append(("ai", f"done{pad}"))
    return out


def transcript(messages: list[Any]) -> list[tuple[str, str]]:
    return [(m.type, m.text) for m in messages]


def digest(lines: list[tuple[str, str]]) -> str:
    """A short fingerprint of a transcript, for passing it between processes."""
    return hashlib.sha256(json.dumps(lines).encode()).hexdigest()


def build_app(
    checkpointer: SQLiteCheckpointer,
    *,
    big: int = 0,
    pause_node: str | None = None,
    pause_turn: int | None = None,
) -> Any:
    """agent -> (tool_a | tool_b in parallel) -> agent ... -> END, TURNS rounds."""
    pad = "x" * big

    def turn_of(state: MessagesState) -> int:
        return sum(1 for m in state.messages if m.type == "ai")

    def maybe_pause(node: str, turn: int) -> None:
        if node == pause_node and turn == pause_turn:
            _pause("IN_NODE", node, turn)

    def agent(state: MessagesState) -> dict[str, Any]:
        k = turn_of(state)
        maybe_pause("agent", k)
        if k == TURNS:
            return {"messages": [AIMessage(f"done{pad}")]}
        calls = [ToolCall(id=f"{t}{k}", name=t, args={"k": k}) for t in ("a", "b")]
        return {"messages": [AIMessage(f"turn {k}{pad}", tool_calls=calls)]}

    def tool(name: str) -> Any:
        def run(state: MessagesState) -> dict[str, Any]:
            k = turn_of(state) - 1
            maybe_pause(f"tool_{name}", k)
            return {"messages": [ToolMessage(f"{name} result {k}", tool_call_id=f"{name}{k}")]}

        return run

    def route(state: MessagesState) -> Any:
        last = state.messages[-1]
        return ["tool_a", "tool_b"] if isinstance(last, AIMessage) and last.tool_calls else END

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tool_a", tool("a"))
    g.add_node("tool_b", tool("b"))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["tool_a", "tool_b", END])
    g.add_edge("tool_a", "agent")
    g.add_edge("tool_b", "agent")
    return g.compile(checkpointer=checkpointer)


class _Announced(Mapping[str, bytes]):
    """A step's messages; iterating them (inside the write transaction) runs a hook first."""

    def __init__(self, data: Mapping[str, bytes], hook: Any) -> None:
        self._data = data
        self._hook = hook

    def __getitem__(self, key: str) -> bytes:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        self._hook()
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def items(self) -> Any:
        self._hook()
        return self._data.items()


class PausingSQLite(SQLiteCheckpointer):
    """Announces every put; pauses inside the transaction of the put of step `pause_step`."""

    def __init__(self, path: str, *, pause_step: int | None = None) -> None:
        super().__init__(path)
        self.pause_step = pause_step

    def put(
        self, record: CheckpointRecord, *, expected_head: str | None, messages: Mapping[str, bytes]
    ) -> None:
        say(_job, "PUT", record.step)
        if record.step == self.pause_step and messages:
            messages = _Announced(messages, lambda: _pause("IN_TX", record.step))
        super().put(record, expected_head=expected_head, messages=messages)
        say(_job, "PUT_DONE", record.step)


# -- jobs -----------------------------------------------------------------------------


def finish(app: Any, thread_id: str) -> Any:
    """Complete the thread from whatever was stored."""
    if app.get_state(thread_id).checkpoint_id is None:
        return app.invoke(start_input(), thread_id=thread_id)
    return app.invoke(None, thread_id=thread_id)


def _run(job: dict[str, Any]) -> None:
    store = PausingSQLite(job["path"], pause_step=job.get("pause_step"))
    app = build_app(
        store,
        big=job.get("big", 0),
        pause_node=job.get("pause_node"),
        pause_turn=job.get("pause_turn"),
    )
    started = time.perf_counter()
    say(_job, "START")
    app.invoke(start_input(), thread_id=job["thread"])
    say(_job, "DONE", f"{time.perf_counter() - started:.6f}")


def _resume(job: dict[str, Any]) -> None:
    app = build_app(SQLiteCheckpointer(job["path"]), big=job.get("big", 0))
    out = finish(app, job["thread"])
    say(_job, "DONE", digest(transcript(out.messages)))


def _cas(job: dict[str, Any], child: int) -> None:
    """Extend the head `attempts` times, each a read-then-compare-and-set racing the others."""
    spec = job.get("store")  # another backend: {"module", "cls", "args", "kwargs"}
    store = (
        getattr(importlib.import_module(spec["module"]), spec["cls"])(
            *spec["args"], **spec["kwargs"]
        )
        if spec
        else SQLiteCheckpointer(job["path"])
    )
    thread_id = job["thread"]
    rng = random.Random(os.getpid())
    wins = losses = 0
    time.sleep(max(0.0, job["start_at"] - time.time()))
    for i in range(job["attempts"]):
        head = store.head(thread_id)
        assert head is not None
        parent = store.get(thread_id, head)
        assert parent is not None
        time.sleep(rng.uniform(0, 0.003))
        record = CheckpointRecord(
            thread_id=thread_id,
            checkpoint_id=new_checkpoint_id(),
            parent_id=head,
            step=parent.step + 1,
            created_at=time.time(),
            base_id=parent.base_id,
            payload=f"{child}:{i}".encode(),
        )
        try:
            store.put(record, expected_head=head, messages={f"m{child}-{i}": b"m"})
            wins += 1
        except ConcurrentRunError:
            losses += 1
    say(_job, "RESULT", json.dumps({"child": child, "wins": wins, "losses": losses}))


def run_job(job: dict[str, Any], child: int) -> None:
    global _job
    _job = job["id"]
    say(_job, "PID", os.getpid())
    mode = job["mode"]
    if mode == "run":
        _run(job)
    elif mode == "resume":
        _resume(job)
    elif mode == "cas":
        _cas(job, child)
    else:
        raise ValueError(f"unknown job mode {mode!r}")


if __name__ == "__main__":
    if sys.argv[1:] != ["serve"]:
        sys.exit("usage: _crash_worker.py serve")
    from _fork_serve import serve  # run as a script: this folder is on the path

    serve(run_job)
