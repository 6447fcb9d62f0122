"""The history checker: proves, per thread, from the workers' log and the store alone,
that racing workers lost nothing and repeated nothing.

For each thread it checks:
1. the transcript is exact: turns 0..n-1, each its input, one tool call, its
   result, its answer, in order, every message id once;
2. every accepted input is in the final state exactly once, and in the order
   accepted: an input accepted before another was sent comes before it;
3. every node run belongs to a stored step (the state it ran on is the state
   before a stored step of that node), one run a step, except the killed
   process's last node run (cut off, run again by another process);
4. every tool call is answered once, and its side effect ran once for it;
5. the stored history is one linear chain (no two checkpoints share a parent),
   the thread is finished and its lease free.

`check_threads` returns the violations as sentences (empty: all good), so a
failing trial says what broke where.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flowgraph.checkpoint.base import BaseCheckpointer

from . import _history_worker as worker


@dataclass(frozen=True, slots=True)
class Event:
    seq: int
    pid: int
    kind: str
    thread: str
    detail: tuple[str, ...]


def read_log(path: Path) -> list[Event]:
    events = []
    for seq, line in enumerate(path.read_text().splitlines()):
        pid, kind, thread, *detail = line.split(" ")
        events.append(Event(seq, int(pid), kind, thread, tuple(d for d in detail if d)))
    return events


def expected_transcript(thread: str, turns: int) -> list[tuple[str, str]]:
    out = []
    for k in range(turns):
        out += [("human", worker.turn_text(k)), ("ai", ""), ("tool", f"result {k}")]
        out += [("ai", f"answer {k}")]
    return out


def _stored_steps(messages: list[Any]) -> set[tuple[str, int, str]]:
    """(node, message count, last message id) of the state before each stored node step."""
    steps = set()
    for i, message in enumerate(messages):
        if i == 0:
            continue
        before = messages[i - 1]
        if message.type == "ai":
            steps.add(("agent", i, before.id))
        elif message.type == "tool" and before.type != "tool":
            steps.add(("tools", i, before.id))
    return steps


def check_thread(
    thread: str,
    messages: list[Any],
    records: list[Any],
    events: list[Event],
    *,
    turns: int,
    killed: set[int],
    finished: bool = True,
    lease_free: bool = True,
) -> list[str]:
    problems: list[str] = []
    mine = [e for e in events if e.thread == thread]
    got = [(m.type, m.text) for m in messages]

    # 1. the transcript
    if got != expected_transcript(thread, turns):
        problems.append(f"{thread}: transcript {got}")
    ids = [m.id for m in messages]
    for message_id, n in Counter(ids).items():
        if n > 1:
            problems.append(f"{thread}: message id {message_id} {n} times")

    # 2. accepted inputs: once each, in the order accepted
    position = {message_id: i for i, message_id in enumerate(ids)}
    accepted = {e.detail[0]: e.seq for e in reversed(mine) if e.kind == "accepted"}
    sent = defaultdict(list)
    for e in mine:
        if e.kind == "send":
            sent[e.detail[0]].append(e.seq)
    for message_id in accepted:
        if ids.count(message_id) != 1:
            problems.append(
                f"{thread}: accepted input {message_id} is in the state {ids.count(message_id)}x"
            )
    for first, accepted_at in accepted.items():
        for second in accepted:
            if first == second or first not in position or second not in position:
                continue
            if min(sent[second]) > accepted_at and position[first] > position[second]:
                problems.append(
                    f"{thread}: {first} was accepted before {second} was sent, but comes after it"
                )

    # 3. node runs: each belongs to a stored step, one run a step
    last_node_of: dict[int, int] = {}
    for e in events:
        if e.kind == "node" and e.pid in killed:
            last_node_of[e.pid] = e.seq
    steps = _stored_steps(messages)
    runs: dict[tuple[str, int, str], list[Event]] = defaultdict(list)
    for e in mine:
        if e.kind != "node":
            continue
        key = (e.detail[0], int(e.detail[1]), e.detail[2])
        cut_off = last_node_of.get(e.pid) == e.seq
        if key not in steps:
            if not cut_off:
                problems.append(
                    f"{thread}: pid {e.pid} ran {key[0]} on {key[1]} messages (last "
                    f"{key[2]}), a step that is not stored"
                )
            continue
        if not cut_off:
            runs[key].append(e)
    for key in steps:
        count = len(runs.get(key, []))
        if count != 1:
            problems.append(f"{thread}: stored step {key} has {count} uncut node runs")

    # 4. side effects: once per stored tool result
    results = Counter(m.tool_call_id for m in messages if m.type == "tool")
    effects = Counter(e.detail[0] for e in mine if e.kind == "effect")
    for call in set(results) | set(effects):
        if results[call] > 1:
            problems.append(f"{thread}: tool call {call} answered {results[call]}x")
        if effects[call] != results[call]:
            problems.append(
                f"{thread}: tool call {call} ran {effects[call]}x for {results[call]} result(s)"
            )

    # 5. one linear history, finished, lease free
    parents = Counter(r.parent_id for r in records)
    for parent, n in parents.items():
        if n > 1:
            problems.append(f"{thread}: {n} checkpoints share the parent {parent}")
    if records and parents[None] != 1:
        problems.append(f"{thread}: {parents[None]} root checkpoints")
    if not finished:
        problems.append(f"{thread}: not finished")
    if not lease_free:
        problems.append(f"{thread}: its lease is still held")
    return problems


def check_threads(
    store: BaseCheckpointer, threads: list[str], log: Path, *, turns: int, killed: set[int]
) -> list[str]:
    """Every violation on `threads` of `store`, given the shared log."""
    events = read_log(log)
    problems = []
    for thread in threads:
        app = worker.build_app(store, lambda *a: None, thread)  # type: ignore[arg-type]
        snap = app.get_state(thread)
        messages = list(snap.values.messages) if snap.values is not None else []
        lease = store.read_lease(thread)
        problems += check_thread(
            thread,
            messages,
            store.history(thread),
            events,
            turns=turns,
            killed=killed,
            finished=not snap.next,
            lease_free=lease is None,
        )
    return problems
