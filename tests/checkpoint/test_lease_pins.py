"""The lease rules no other test pins: fork, failing renewals, and giving a claim back.

Each test names the rule of `flowgraph/graph/_thread/lease.py`'s docstring it holds
to; all run on real SQLite files (and one on a real forked process).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from flowgraph import END, START, AIMessage, HumanMessage, MessagesState, StateGraph
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.errors import ConcurrentRunError
from flowgraph.graph._thread import lease as _lease
from flowgraph.graph._thread.lease import holds

from .test_thread_lease import FOREIGN, Gate
from .test_thread_lease import gated_app as one_node_app


def in_thread(fn: Any, *args: Any, **kwargs: Any) -> tuple[threading.Thread, list[Any]]:
    outcome: list[Any] = []

    def work() -> None:
        try:
            outcome.append(fn(*args, **kwargs))
        except BaseException as exc:  # the test looks at it
            outcome.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    return worker, outcome


def texts(app: Any, thread_id: str) -> list[str]:
    return [m.text for m in app.get_state(thread_id).values.messages]


# -- fork ------------------------------------------------------------------------


def _child(app: Any, to_parent: int, from_parent: int) -> dict[str, Any]:
    """In the forked child: try the thread while the parent holds it, then after."""
    report: dict[str, Any] = {}
    try:
        app.invoke({"messages": [HumanMessage("child early")]}, thread_id="t")
        report["while_held"] = "ran"
    except ConcurrentRunError as busy:
        report["while_held"] = ["busy", busy.run_id]
    os.write(to_parent, (json.dumps(report) + "\n").encode())
    assert os.read(from_parent, 1) == b"r"  # the parent's run released the thread
    try:
        app.invoke({"messages": [HumanMessage("child late")]}, thread_id="t", run_id="child-run")
        report["after_release"] = texts(app, "t")
    except ConcurrentRunError as busy:
        report["after_release"] = ["busy", busy.run_id]
    return report


def test_a_child_forked_while_the_parent_holds_a_lease_waits_its_turn_then_takes_the_thread(
    tmp_path: Path,
) -> None:
    """The parent's lease is not the child's: refused while held, free once released."""
    store = SQLiteCheckpointer(tmp_path / "fork.db")
    gate = Gate()
    app = one_node_app(store, gate)
    worker, outcome = in_thread(
        app.invoke, {"messages": [HumanMessage("parent")]}, thread_id="t", run_id="parent-run"
    )
    assert gate.entered.wait(10)
    child_to_parent, parent_reads = os.pipe()[::-1]
    child_reads, parent_to_child = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        code = 0
        try:
            gate.go.set()  # the child's copy of the parent's run is not running anyway
            report = _child(app, child_to_parent, child_reads)
            os.write(child_to_parent, (json.dumps(report) + "\n").encode())
        except BaseException as exc:
            os.write(child_to_parent, (json.dumps({"error": repr(exc)}) + "\n").encode())
            code = 1
        finally:
            os._exit(code)
    os.close(child_to_parent)
    os.close(child_reads)
    with os.fdopen(parent_reads) as replies:
        early = json.loads(replies.readline())
        gate.go.set()
        worker.join(30)
        assert outcome[0].messages[-1].text == "answer to parent"
        assert store.read_lease("t") is None
        os.write(parent_to_child, b"r")
        late = json.loads(replies.readline())
    os.close(parent_to_child)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, late
    # while the parent held it, the child neither ran nor took the parent's lease over
    assert early == {"while_held": ["busy", "parent-run"]}
    # once the parent gave it back, the child's run took the thread and ran its turn
    assert late["after_release"] == [
        "parent",
        "answer to parent",
        "child late",
        "answer to child late",
    ]
    assert texts(app, "t") == late["after_release"]
    assert store.read_lease("t") is None


# -- renewals that fail ----------------------------------------------------------


class FlakyRenewals(SQLiteCheckpointer):
    """A SQLite store whose `renew_lease` raises `fails` times (None: always), then works."""

    def __init__(self, path: Path, *, lease_s: float, fails: int | None) -> None:
        super().__init__(path, lease_s=lease_s)
        self.fails = fails
        self.tries: list[float] = []
        self.answered: list[bool | None] = []
        self.tried_enough = threading.Event()
        self.enough = 1 if fails is None else fails + 2
        """Tries the test waits for: the failures, the success, and the renewal after it."""

    def renew_lease(self, thread_id: str, run_id: str, owner: str, lease_s: float) -> bool:
        self.tries.append(time.monotonic())
        try:
            if self.fails is None or len(self.tries) <= self.fails:
                self.answered.append(None)
                raise ConnectionError("the store is unreachable")
            kept = super().renew_lease(thread_id, run_id, owner, lease_s)
            self.answered.append(kept)
            return kept
        finally:
            if len(self.tries) >= self.enough:
                self.tried_enough.set()


def test_a_failed_renewal_is_tried_again_after_a_sixth_and_a_later_success_keeps_the_lease(
    tmp_path: Path,
) -> None:
    lease_s = 1.2
    store = FlakyRenewals(tmp_path / "flaky.db", lease_s=lease_s, fails=2)
    kept: dict[str, Any] = {}

    def node(state: MessagesState) -> dict[str, Any]:
        assert store.tried_enough.wait(10), store.tries
        kept["holds"] = holds(store, "t", "flaky-run")
        kept["intruder"] = store.acquire_lease("t", "intruder", FOREIGN, lease_s)
        return {"messages": [AIMessage("done")]}

    g = StateGraph(MessagesState)
    g.add_node("agent", node)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    app = g.compile(checkpointer=store)
    began = time.monotonic()
    app.invoke({"messages": [HumanMessage("go")]}, thread_id="t", run_id="flaky-run")
    first, second, third, fourth = store.tries[:4]
    assert store.answered[:4] == [None, None, True, True]
    assert first - began >= lease_s / 3 - 0.01  # the usual renewal, a third in
    # each failed try is tried again after a sixth of the lease, not a third
    for failed, retry in ((first, second), (second, third)):
        assert lease_s / 6 - 0.01 <= retry - failed < lease_s / 3 - 0.02, store.tries
    # after the success, the usual third again (not at once, not a sixth)
    assert fourth - third >= lease_s / 3 - 0.01, store.tries
    # two failures and a success before the lease ran out: the run kept its thread
    assert third - began < lease_s
    assert kept["holds"] is True
    assert kept["intruder"] is not None and kept["intruder"].run_id == "flaky-run"
    assert texts(app, "t") == ["go", "done"]
    assert store.read_lease("t") is None


def test_a_lease_never_renewed_before_it_runs_out_is_lost_and_the_run_stops_at_its_next_step(
    tmp_path: Path,
) -> None:
    """Every try failed until the lease ran out: the store may give the thread away now."""
    lease_s = 0.6
    store = FlakyRenewals(tmp_path / "down.db", lease_s=lease_s, fails=None)
    steps: list[str] = []
    seen: dict[str, float] = {}

    def first(state: MessagesState) -> dict[str, Any]:
        steps.append("first")
        assert store.tried_enough.wait(10)
        seen["first_try"] = store.tries[0]
        deadline = time.monotonic() + 10
        stop = threading.Event()
        while holds(store, "t", "down-run") and time.monotonic() < deadline:
            stop.wait(0.01)  # the keeper thread decides; nothing to wait on but its verdict
        seen["lost_at"] = time.monotonic()
        seen["tries"] = len(store.tries)
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
    app = g.compile(checkpointer=store)
    began = time.monotonic()
    with pytest.raises(ConcurrentRunError, match="lost thread 't'") as stopped:
        app.invoke({"messages": [HumanMessage("go")]}, thread_id="t", run_id="down-run")
    assert stopped.value.run_id == "down-run"
    assert steps == ["first"]  # it stopped before its next step
    # the keeper kept trying until the lease ran out, not a moment sooner
    assert seen["lost_at"] - began >= lease_s
    assert seen["tries"] >= 4, store.tries  # a third in, then every sixth until the end
    # the store's lease ran out with it: another run may take the thread now
    assert store.acquire_lease("t", "next", FOREIGN, lease_s) is None
    assert texts(app, "t") == ["go", "first"]


# -- giving a claim back ---------------------------------------------------------


def test_release_thread_after_the_run_adopted_the_claim_leaves_the_run_its_lease(
    tmp_path: Path,
) -> None:
    store = SQLiteCheckpointer(tmp_path / "adopted.db")
    gate = Gate()
    app = one_node_app(store, gate)
    app.claim_thread("t", run_id="r")
    worker, _ = in_thread(app.invoke, {"messages": [HumanMessage("hi")]}, thread_id="t", run_id="r")
    assert gate.entered.wait(10)
    app.release_thread("t", run_id="r")
    held = store.read_lease("t")
    assert held is not None and held.run_id == "r"
    assert store.acquire_lease("t", "intruder", FOREIGN, 60.0) == held
    gate.go.set()
    worker.join(30)
    assert texts(app, "t") == ["hi", "answer to hi"]
    assert store.read_lease("t") is None


def test_a_run_starting_while_its_claim_is_given_back_never_adopts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`release_thread` withdraws the claim in the same step that finds it unadopted: a
    run with that id starting right after finds the thread busy instead of adopting a
    lease on its way back (it used to run on with no lease in the store)."""
    store = SQLiteCheckpointer(tmp_path / "race.db")
    gate = Gate()
    settled = threading.Event()

    def node(state: MessagesState) -> dict[str, Any]:
        settled.set()
        return gate.node(state)

    g = StateGraph(MessagesState)
    g.add_node("agent", node)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    app = g.compile(checkpointer=store)
    app.claim_thread("t", run_id="r")
    runs: list[tuple[threading.Thread, list[Any]]] = []
    registry = _lease._registry
    remove = registry.remove

    def invoke() -> Any:
        try:
            return app.invoke({"messages": [HumanMessage("hi")]}, thread_id="t", run_id="r")
        finally:
            settled.set()

    def start_the_run_first(lease: Any) -> None:
        # the release found the claim and is about to give it back: the run starts now
        if not runs:
            runs.append(in_thread(invoke))
            assert settled.wait(10)
        remove(lease)

    monkeypatch.setattr(registry, "remove", start_the_run_first)
    app.release_thread("t", run_id="r")
    lease_after_release = store.read_lease("t")
    gate.go.set()
    worker, outcome = runs[0]
    worker.join(30)
    monkeypatch.undo()
    assert gate.calls == []  # the run never started its node
    assert isinstance(outcome[0], ConcurrentRunError), outcome
    assert outcome[0].thread_id == "t"
    assert lease_after_release is None
    assert app.get_state("t").checkpoint_id is None  # nothing stored
    # the thread is free: the run, sent again, takes it
    again = app.invoke({"messages": [HumanMessage("hi")]}, thread_id="t", run_id="r")
    assert [m.text for m in again.messages] == ["hi", "answer to hi"]
    assert store.read_lease("t") is None


# -- waiting for a busy thread ---------------------------------------------------


class CountingAcquires(SQLiteCheckpointer):
    """Counts `acquire_lease` calls: how often a waiting run asks the store."""

    acquires = 0

    def acquire_lease(self, *args: Any, **kwargs: Any) -> Any:
        self.acquires += 1
        return super().acquire_lease(*args, **kwargs)


def test_a_run_waiting_for_a_busy_thread_asks_less_and_less_often(tmp_path: Path) -> None:
    """The wait backs off from 1 ms to 50 ms between asks and stays there: a long wait
    costs the store ~20 calls a second, not a thousand, and sees the thread free soon."""
    store = CountingAcquires(tmp_path / "wait.db")
    assert store.acquire_lease("t", "holder", FOREIGN, 60.0) is None
    store.acquires = 0
    app = one_node_app(store, Gate())
    began = time.monotonic()
    with pytest.raises(ConcurrentRunError, match="still busy") as refused:
        app.invoke({"messages": [HumanMessage("hi")]}, thread_id="t", wait=1.0)
    waited = time.monotonic() - began
    assert refused.value.run_id == "holder"
    assert waited >= 1.0
    # 1, 2, 4, ... 32 ms (7 asks in 63 ms), then one every 50 ms: ~26 asks in a second;
    # a busy machine's late wake-ups make fewer, never more
    backed_off = 7 + (waited - 0.063) / 0.05
    assert 0.6 * backed_off <= store.acquires <= backed_off + 2, (store.acquires, waited)


# -- the keeper's sleep, and a claim cut off ------------------------------------------


def test_the_keeper_sleeps_between_renewals(tmp_path: Path) -> None:
    """While a run holds a lease, the keeper thread costs no CPU between renewals."""
    gate = Gate()
    # a short lease: the keeper wakes for it (renewing it twice in the span measured)
    app = one_node_app(SQLiteCheckpointer(tmp_path / "idle.db", lease_s=0.3), gate)
    worker, _ = in_thread(app.invoke, {"messages": [HumanMessage("hold")]}, thread_id="t")
    assert gate.entered.wait(10)
    cpu = time.process_time()
    threading.Event().wait(0.4)  # a span to measure over, not a synchronisation
    spent = time.process_time() - cpu
    gate.go.set()
    worker.join(30)
    assert spent < 0.1, spent


def test_a_registry_starts_with_its_keeper_awake() -> None:
    """`wakes_at` is read by a run that starts before the new keeper first sleeps."""
    import math

    assert _lease._Registry().wakes_at == -math.inf


class GrantThenFail(SQLiteCheckpointer):
    """Grants the lease, then loses the reply (once): the caller cannot know it holds it."""

    failed = False

    def acquire_lease(self, *args: Any, **kwargs: Any) -> Any:
        holder = super().acquire_lease(*args, **kwargs)
        if not self.failed:
            self.failed = True
            raise ConnectionError("the reply was lost")
        return holder


def test_a_claim_whose_answer_was_lost_holds_nothing_afterwards(tmp_path: Path) -> None:
    store = GrantThenFail(tmp_path / "lost-reply.db")
    app = one_node_app(store, Gate())
    with pytest.raises(ConnectionError, match="reply was lost"):
        app.invoke({"messages": [HumanMessage("one")]}, thread_id="t", run_id="first")
    assert store.read_lease("t") is None  # given back in the store
    assert not holds(store, "t", "first")  # and in this process
    opened = Gate()
    opened.go.set()
    app = one_node_app(store, opened)
    done = app.invoke({"messages": [HumanMessage("two")]}, thread_id="t", run_id="second")
    assert [m.text for m in done.messages] == ["two", "answer to two"]


def test_a_lease_is_renewed_a_third_in_even_when_the_keeper_wakes_for_another(
    tmp_path: Path,
) -> None:
    """The keeper, woken every 0.2 s for a short lease, leaves a 3 s lease alone until
    its third (1 s), although it is awake past the long lease's quarter (0.75 s)."""
    long_store = FlakyRenewals(tmp_path / "long.db", lease_s=3.0, fails=0)
    short_store = FlakyRenewals(tmp_path / "short.db", lease_s=0.6, fails=0)
    long_store.enough = 1

    def holding(store: FlakyRenewals) -> Any:
        def node(state: MessagesState) -> dict[str, Any]:
            assert long_store.tried_enough.wait(10)  # both hold until the long one's renewal
            return {"messages": [AIMessage("renewed")]}

        g = StateGraph(MessagesState)
        g.add_node("agent", node)
        g.add_edge(START, "agent")
        g.add_edge("agent", END)
        return g.compile(checkpointer=store)

    began = time.monotonic()
    runs = [
        in_thread(holding(store).invoke, {"messages": [HumanMessage("go")]}, thread_id="t")
        for store in (long_store, short_store)
    ]
    for worker, outcome in runs:
        worker.join(30)
        assert outcome[0].messages[-1].text == "renewed"
    assert len(short_store.tries) >= 3  # the keeper was awake again and again meanwhile
    assert long_store.tries[0] - began >= 3.0 / 3 - 0.01, (long_store.tries, began)
