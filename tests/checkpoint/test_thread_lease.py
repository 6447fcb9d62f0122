"""One writer per thread: what runs do with the lease, on every backend.

A run holds its thread from before its input is stored until it ends,
pauses, fails or its stream is closed; a second run is refused at once and
leaves no trace; a dead holder of this machine is taken over at once, one
of another machine once its lease expires.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from flowgraph import (
    END,
    START,
    AIMessage,
    ConcurrentRunError,
    HumanMessage,
    MessagesState,
    StateGraph,
    interrupt,
)
from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.graph._thread.lease import _registry

from .conftest import Backend, ThreadIds

FOREIGN = "other-host#00000000#1/4242/99"


class Gate:
    """A node that signals it started and waits to be let go; counts its runs."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.go = threading.Event()
        self.calls: list[str] = []

    def node(self, state: MessagesState) -> dict[str, Any]:
        self.calls.append(state.messages[-1].text)
        self.entered.set()
        assert self.go.wait(30), "the test never let the node go"
        return {"messages": [AIMessage(f"answer to {state.messages[-1].text}")]}


def gated_app(store: BaseCheckpointer, gate: Gate) -> Any:
    g = StateGraph(MessagesState)
    g.add_node("agent", gate.node)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    return g.compile(checkpointer=store)


def open_app(store: BaseCheckpointer) -> tuple[Any, Gate]:
    """`gated_app` with its gate open: the node answers at once (the gate still counts)."""
    gate = Gate()
    gate.go.set()
    return gated_app(store, gate), gate


def start_in_thread(fn: Any, *args: Any, **kwargs: Any) -> tuple[threading.Thread, list[Any]]:
    outcome: list[Any] = []

    def work() -> None:
        try:
            outcome.append(fn(*args, **kwargs))
        except BaseException as exc:  # surfaced by the test
            outcome.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    return worker, outcome


def held_run(
    app: Any, gate: Gate, thread_id: str, text: str, **options: Any
) -> tuple[threading.Thread, list[Any]]:
    """`app.invoke` of `text` on a thread of its own, returned once its node holds the gate."""
    worker, outcome = start_in_thread(
        app.invoke, {"messages": [HumanMessage(text)]}, thread_id=thread_id, **options
    )
    assert gate.entered.wait(10)
    return worker, outcome


def texts(app: Any, thread_id: str) -> list[str]:
    return [m.text for m in app.get_state(thread_id).values.messages]


def test_a_second_run_on_a_busy_thread_is_refused_at_once_and_leaves_no_trace(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    gate = Gate()
    app = gated_app(checkpointer, gate)
    worker, outcome = held_run(app, gate, t, "from A", run_id="run-a")
    history_before = [s.checkpoint_id for s in app.get_state_history(t)]
    other = gated_app(checkpointer, gate)  # another app on the same store, as another process
    started = time.monotonic()
    with pytest.raises(ConcurrentRunError) as refused:
        other.invoke({"messages": [HumanMessage("from B")]}, thread_id=t)
    assert time.monotonic() - started < 5  # at once, not after a wait
    assert refused.value.thread_id == t
    assert refused.value.run_id == "run-a"
    assert "run-a" in str(refused.value) and t in str(refused.value)
    assert [s.checkpoint_id for s in app.get_state_history(t)] == history_before
    gate.go.set()
    worker.join(30)
    assert not isinstance(outcome[0], BaseException), outcome
    assert gate.calls == ["from A"]  # B's node never ran
    assert texts(app, t) == ["from A", "answer to from A"]


def test_get_state_tells_whether_a_thread_is_busy(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    gate = Gate()
    app = gated_app(checkpointer, gate)
    assert app.get_state(t).active_run is None
    worker, _ = held_run(app, gate, t, "hi", run_id="the-run")
    busy = app.get_state(t)
    assert busy.active_run == "the-run" and busy.busy
    gate.go.set()
    worker.join(30)
    idle = app.get_state(t)
    assert idle.active_run is None and not idle.busy
    assert checkpointer.read_lease(t) is None


def test_the_lease_is_given_back_when_a_run_pauses_or_fails(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()

    def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt("ok?")
        if answer == "boom":
            raise RuntimeError("the node failed")
        return {"messages": [AIMessage(f"got {answer}")]}

    g = StateGraph(MessagesState)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    app = g.compile(checkpointer=checkpointer)
    from flowgraph import Command

    app.invoke({"messages": [HumanMessage("go")]}, thread_id=t)
    assert app.get_state(t).interrupts and checkpointer.read_lease(t) is None
    with pytest.raises(RuntimeError, match="the node failed"):
        app.invoke(Command(resume="boom"), thread_id=t)
    assert checkpointer.read_lease(t) is None
    app.invoke(Command(resume="yes"), thread_id=t)
    assert texts(app, t)[-1] == "got yes"
    assert checkpointer.read_lease(t) is None


def test_a_finished_run_gives_its_lease_back_in_its_last_steps_write(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    """Where the store can, the last step's put also frees the thread: no write of its own."""
    t = tid()
    released: list[str] = []
    give_back = checkpointer.release_lease

    def counted(thread_id: str, run_id: str, owner: str) -> None:
        released.append(run_id)
        give_back(thread_id, run_id, owner)

    checkpointer.release_lease = counted  # type: ignore[method-assign]
    app, _ = open_app(checkpointer)
    for text in ("one", "two"):
        app.invoke({"messages": [HumanMessage(text)]}, thread_id=t)
        assert checkpointer.read_lease(t) is None
    assert texts(app, t) == ["one", "answer to one", "two", "answer to two"]
    assert released == [], released


def test_a_head_moved_between_the_runs_read_and_its_first_write_is_read_again(
    backend: Backend, checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    """The input write takes the lease (put_and_acquire) after the state was read without
    it; another run finishing in between makes that write fail, and the run starts over
    the usual way: lease first, then the thread as the other run left it."""
    if backend.name == "memory":
        pytest.skip("needs a second client of the same store: memory has no second client")
    t = tid()
    app, gate = open_app(checkpointer)
    second = backend.make()  # another process's client, as far as leases go
    other = gated_app(second, gate)
    app.invoke({"messages": [HumanMessage("one")]}, thread_id=t)
    first_write = checkpointer.put_and_acquire
    cut_in: list[str] = []

    def late(record: Any, **kwargs: Any) -> Any:
        if not cut_in:
            cut_in.append("two")
            other.invoke({"messages": [HumanMessage("two")]}, thread_id=t)
        return first_write(record, **kwargs)

    checkpointer.put_and_acquire = late  # type: ignore[method-assign]
    app.invoke({"messages": [HumanMessage("three")]}, thread_id=t)
    second.close()
    assert cut_in == ["two"]
    assert texts(app, t) == [
        "one",
        "answer to one",
        "two",
        "answer to two",
        "three",
        "answer to three",
    ]
    assert checkpointer.read_lease(t) is None


def test_a_failure_right_after_the_input_write_leaves_no_lease_held(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    app, gate = open_app(checkpointer)
    first_write = checkpointer.put_and_acquire

    def written_then_lost(record: Any, **kwargs: Any) -> Any:
        first_write(record, **kwargs)
        raise OSError("the connection dropped after the write")

    checkpointer.put_and_acquire = written_then_lost  # type: ignore[method-assign]
    with pytest.raises(OSError, match="connection dropped"):
        app.invoke({"messages": [HumanMessage("one")]}, thread_id=t)
    assert checkpointer.read_lease(t) is None and gate.calls == []
    del checkpointer.put_and_acquire
    app.invoke(None, thread_id=t)  # the input was stored: the thread goes on from it
    assert texts(app, t) == ["one", "answer to one"]


def test_a_subclass_that_overrides_put_sees_the_last_step_too(
    tmp_path: Any, tid: ThreadIds
) -> None:
    from flowgraph.checkpoint import SQLiteCheckpointer

    steps: list[int] = []

    class Recording(SQLiteCheckpointer):
        def put(self, record: Any, *, expected_head: str | None, messages: Any) -> None:
            steps.append(record.step)
            super().put(record, expected_head=expected_head, messages=messages)

    store = Recording(tmp_path / "r.db")
    gate = Gate()
    gate.go.set()
    t = tid()
    gated_app(store, gate).invoke({"messages": [HumanMessage("one")]}, thread_id=t)
    assert steps == [0, 1]  # the input and the node's step, which was the last
    assert store.read_lease(t) is None
    store.close()


def test_a_stream_closed_or_abandoned_gives_the_lease_back(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()

    def step(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"step {len(state.messages)}")]}

    g = StateGraph(MessagesState)
    names = ["a", "b", "c", "d", "e", "f"]
    g.add_sequence([(name, step) for name in names])
    g.add_edge(START, "a")
    g.add_edge("f", END)
    app = g.compile(checkpointer=checkpointer)
    stream = app.stream(
        {"messages": [HumanMessage("go")]}, thread_id=t, run_id="closed", mode="updates"
    )
    first = next(stream)
    assert first.node == "a"
    assert app.get_state(t).active_run == "closed"
    stream.close()
    assert checkpointer.read_lease(t) is None
    abandoned = app.stream(None, thread_id=t, run_id="abandoned", mode="updates")
    assert next(abandoned).node in names[1:4]
    assert app.get_state(t).active_run == "abandoned"
    del abandoned
    gc.collect()
    assert checkpointer.read_lease(t) is None
    app.invoke(None, thread_id=t)  # the thread is free and finishes
    assert texts(app, t) == ["go", *(f"step {n}" for n in range(1, 7))]


def test_async_stream_closed_early_gives_the_lease_back(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    app, _ = open_app(checkpointer)

    async def scenario() -> None:
        stream = app.astream({"messages": [HumanMessage("hi")]}, thread_id=t, mode="values")
        async for _ in stream:
            break
        await stream.aclose()  # type: ignore[attr-defined]

    asyncio.run(scenario())
    assert checkpointer.read_lease(t) is None


def test_wait_takes_the_thread_once_the_holder_is_done(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    gate = Gate()
    app = gated_app(checkpointer, gate)
    first, first_out = held_run(app, gate, t, "one")
    second, second_out = start_in_thread(
        app.invoke, {"messages": [HumanMessage("two")]}, thread_id=t, wait=True
    )
    time.sleep(0.3)
    assert second_out == [] and gate.calls == ["one"]  # still waiting its turn
    gate.go.set()
    first.join(30)
    second.join(30)
    assert not isinstance(first_out[0], BaseException), first_out
    assert not isinstance(second_out[0], BaseException), second_out
    assert texts(app, t) == ["one", "answer to one", "two", "answer to two"]


def test_wait_with_a_timeout_gives_up_naming_the_holder(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    gate = Gate()
    app = gated_app(checkpointer, gate)
    worker, _ = held_run(app, gate, t, "one", run_id="slow-run")
    started = time.monotonic()
    with pytest.raises(ConcurrentRunError, match=r"still busy.*slow-run.*after waiting 0.3 s"):
        app.invoke({"messages": [HumanMessage("two")]}, thread_id=t, wait=0.3)
    assert 0.3 <= time.monotonic() - started < 5
    gate.go.set()
    worker.join(30)
    assert texts(app, t) == ["one", "answer to one"]


def test_a_holder_on_another_machine_blocks_until_its_lease_expires(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    app, gate = open_app(checkpointer)
    assert checkpointer.acquire_lease(t, "far-away", FOREIGN, 0.5) is None
    with pytest.raises(ConcurrentRunError, match="far-away"):
        app.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)
    assert gate.calls == []
    time.sleep(0.65)
    app.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)
    assert texts(app, t) == ["hi", "answer to hi"]


def test_a_lease_left_by_this_process_with_no_run_holding_it_is_taken_over(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    from flowgraph.checkpoint._lease import process_owner

    t = tid()
    app, _ = open_app(checkpointer)
    # a run of this process that could not give its lease back (say the store was down)
    assert checkpointer.acquire_lease(t, "stale", process_owner(), 60.0) is None
    app.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)
    assert texts(app, t) == ["hi", "answer to hi"]


def test_a_long_node_keeps_its_lease_by_renewal(backend: Backend, tid: ThreadIds) -> None:
    store = backend.make()
    store.lease_s = 0.4
    t = tid()
    gate = Gate()
    app = gated_app(store, gate)
    worker, _ = start_in_thread(
        app.invoke, {"messages": [HumanMessage("long")]}, thread_id=t, run_id="long-run"
    )
    try:
        assert gate.entered.wait(10)
        time.sleep(1.2)  # three lease lengths: only renewal keeps it
        holder = store.acquire_lease(t, "intruder", FOREIGN, 0.4)
        assert holder is not None and holder.run_id == "long-run"
    finally:
        gate.go.set()
        worker.join(30)
    assert texts(app, t) == ["long", "answer to long"]
    store.close()


def test_a_short_lease_is_renewed_while_the_keeper_sleeps_for_a_long_one(
    tid: ThreadIds,
) -> None:
    """The keeper is woken only for a lease due before its sleep ends, and then it is."""
    from flowgraph.checkpoint import MemoryCheckpointer

    slow, fast = MemoryCheckpointer(lease_s=60), MemoryCheckpointer(lease_s=0.4)
    long_gate, short_gate = Gate(), Gate()
    long_app, short_app = gated_app(slow, long_gate), gated_app(fast, short_gate)
    t = tid()
    runs = [start_in_thread(long_app.invoke, {"messages": [HumanMessage("hold")]}, thread_id=t)[0]]
    try:
        assert long_gate.entered.wait(10)  # the keeper now sleeps ~20 s, for the long lease
        time.sleep(0.05)
        runs.append(
            start_in_thread(short_app.invoke, {"messages": [HumanMessage("hold")]}, thread_id=t)[0]
        )
        assert short_gate.entered.wait(10)
        time.sleep(1.2)  # three of the short lease's lengths
        holder = fast.acquire_lease(t, "intruder", FOREIGN, 0.4)
        assert holder is not None and holder.run_id != "intruder"
    finally:
        long_gate.go.set()
        short_gate.go.set()
        for run in runs:
            run.join(30)
    assert texts(short_app, t) == ["hold", "answer to hold"]


def test_runs_one_after_another_do_not_wake_the_keeper_each_time(
    checkpointer: BaseCheckpointer, tid: ThreadIds, monkeypatch: pytest.MonkeyPatch
) -> None:
    woken: list[None] = []
    notify = _registry.wake.notify
    monkeypatch.setattr(_registry.wake, "notify", lambda n=1: (woken.append(None), notify(n)))
    app, _ = open_app(checkpointer)
    t = tid()
    for n in range(10):
        app.invoke({"messages": [HumanMessage(f"turn {n}")]}, thread_id=t)
    # at most: once for the first lease after the keeper slept with none, once more if
    # the second run came before the keeper looked (it then sleeps until that lease is due)
    assert len(woken) <= 2, len(woken)
    assert len(texts(app, t)) == 20


def test_a_run_that_lost_its_lease_stops_before_its_next_step(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    steps: list[str] = []
    taken = threading.Event()

    def first(state: MessagesState) -> dict[str, Any]:
        steps.append("first")
        lease = checkpointer.read_lease(t)
        assert lease is not None
        # another process found this run dead and took the thread over
        assert checkpointer.acquire_lease(t, "rescuer", FOREIGN, 60.0, takeover=lease) is None
        # this process's keeper finds out at its next renewal: due now
        (mine,) = [held for held in _registry.by_thread.values() if held.thread_id == t]
        mine.renewed_at = 0.0
        with _registry.lock:
            _registry.wake.notify()
        deadline = time.monotonic() + 10
        while not mine.lost:  # (the keeper drops a lost lease from the registry at once)
            assert time.monotonic() < deadline, "the keeper never found the lease lost"
            time.sleep(0.01)
        taken.set()
        return {"messages": [AIMessage("first")]}

    def second(state: MessagesState) -> dict[str, Any]:
        steps.append("second")
        return {"messages": [AIMessage("second")]}

    g = StateGraph(MessagesState)
    g.add_node("first", first)
    g.add_node("second", second)
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", END)
    app = g.compile(checkpointer=checkpointer)
    with pytest.raises(ConcurrentRunError, match="lost thread"):
        app.invoke({"messages": [HumanMessage("go")]}, thread_id=t)
    assert taken.is_set()
    assert steps == ["first"]
    lease = checkpointer.read_lease(t)
    assert lease is not None and lease.run_id == "rescuer"  # never given back by the loser


def test_update_state_on_a_busy_thread_is_refused(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    gate = Gate()
    app = gated_app(checkpointer, gate)
    worker, _ = held_run(app, gate, t, "one")
    with pytest.raises(ConcurrentRunError):
        app.update_state(t, {"messages": [HumanMessage("sneaked in")]})
    gate.go.set()
    worker.join(30)
    app.update_state(t, {"messages": [HumanMessage("after")]})
    assert texts(app, t) == ["one", "answer to one", "after"]


def test_delete_and_prune_of_a_busy_thread_are_refused_or_wait_for_the_run(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    gate = Gate()
    app = gated_app(checkpointer, gate)
    gate.go.set()
    app.invoke({"messages": [HumanMessage("one")]}, thread_id=t)
    gate.go.clear()
    gate.entered.clear()
    worker, _ = held_run(app, gate, t, "two", run_id="writer")

    with pytest.raises(ConcurrentRunError, match=r"run 'writer'.*cannot be deleted") as refused:
        app.delete_thread(t)
    with pytest.raises(ConcurrentRunError, match="cannot be pruned"):
        app.prune(t, keep_last=1)
    kept = len(list(app.get_state_history(t)))
    threading.Timer(0.2, gate.go.set).start()
    app.delete_thread(t, wait=30)  # waits for the run to end, then deletes what it wrote
    worker.join(30)

    assert refused.value.run_id == "writer" and refused.value.thread_id == t
    assert kept >= 3  # nothing was deleted or pruned while the run held the thread
    assert app.get_state(t).checkpoint_id is None and app.threads().count(t) == 0
    assert checkpointer.read_lease(t) is None


def test_a_holder_deletes_and_prunes_under_its_own_claim(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    app, _ = open_app(checkpointer)
    for text in ("one", "two"):  # each over MIN_BYTES_BETWEEN_SNAPSHOTS: prunable
        app.invoke({"messages": [HumanMessage(text * 10_000)]}, thread_id=t)
    app.claim_thread(t, run_id="tidy")

    dropped = app.prune(t, keep_last=1, run_id="tidy")
    with pytest.raises(ConcurrentRunError, match="tidy"):
        app.prune(t, keep_last=1)  # anyone else is refused meanwhile
    still_held = app.get_state(t).active_run
    app.delete_thread(t, run_id="tidy")
    held_after = app.get_state(t).active_run
    app.release_thread(t, run_id="tidy")

    assert dropped >= 1 and still_held == "tidy" and held_after == "tidy"
    assert app.get_state(t).checkpoint_id is None
    assert checkpointer.read_lease(t) is None


def test_claim_thread_reserves_it_for_a_run_that_adopts_it(
    checkpointer: BaseCheckpointer, tid: ThreadIds
) -> None:
    t = tid()
    app, gate = open_app(checkpointer)
    app.claim_thread(t, run_id="queued")
    assert app.get_state(t).active_run == "queued"
    with pytest.raises(ConcurrentRunError, match="queued"):
        app.invoke({"messages": [HumanMessage("other")]}, thread_id=t)
    with pytest.raises(ConcurrentRunError):
        app.claim_thread(t, run_id="another")
    app.invoke({"messages": [HumanMessage("mine")]}, thread_id=t, run_id="queued")
    assert gate.calls == ["mine"]
    assert checkpointer.read_lease(t) is None  # the run gave it back when it ended
    app.release_thread(t, run_id="queued")  # nothing left to give back: no error
    app.claim_thread(t, run_id="unused")
    app.release_thread(t, run_id="unused")
    assert checkpointer.read_lease(t) is None


# -- processes ----------------------------------------------------------------------

HOLDER = """
import json, sys, time
spec = json.loads(sys.argv[1])
from flowgraph import START, END, AIMessage, HumanMessage, MessagesState, StateGraph
if spec.get("path"):
    from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
    store = SQLiteCheckpointer(spec["path"])
else:
    import importlib
    s = spec["store"]
    store = getattr(importlib.import_module(s["module"]), s["cls"])(*s["args"], **s["kwargs"])
store.lease_s = 60.0
def agent(state):
    print("IN_NODE", flush=True)
    time.sleep(60)
    return {"messages": [AIMessage("never")]}
g = StateGraph(MessagesState)
g.add_node("agent", agent)
g.add_edge(START, "agent")
g.add_edge("agent", END)
app = g.compile(checkpointer=store)
app.invoke({"messages": [HumanMessage("from the dead")]}, thread_id=spec["thread"], run_id="dead")
"""


def test_a_killed_holder_on_this_machine_is_taken_over_at_once(
    backend: Backend, tid: ThreadIds
) -> None:
    if backend.path is None and backend.spec is None:
        pytest.skip(f"{backend.name}: no store shared between processes in this suite")
    t = tid()
    spec = {"path": str(backend.path) if backend.path else None, "store": backend.spec, "thread": t}
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, json.dumps(spec)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "IN_NODE"
    store = backend.make()
    store.lease_s = 60.0
    app, gate = open_app(store)
    with pytest.raises(ConcurrentRunError, match="dead"):  # alive: busy
        app.invoke({"messages": [HumanMessage("too early")]}, thread_id=t)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
    started = time.monotonic()
    app.invoke(None, thread_id=t)  # resumes the crashed step at once (the lease had 60 s left)
    assert time.monotonic() - started < 10
    assert gate.calls == ["from the dead"]
    assert texts(app, t) == ["from the dead", "answer to from the dead"]
    store.close()
