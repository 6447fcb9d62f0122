"""Each window of the lease protocol, held open on purpose, with a named test (issue #28).

Process A (a forked `_history_worker.py` child) stops at a gate before or
after one storage call (`_windows.widen`); while it waits, this test process
(B, another client of the same store) does what a racing worker would; then
A goes on. Every test ends with the history checker (`_history.py`) on the
thread: inputs once each in order, node runs only in stored steps, one
linear history. The protocol's rules are in flowgraph/graph/_thread/lease.py.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flowgraph.checkpoint.base import BaseCheckpointer

from . import _history
from . import _history_worker as worker
from ._windows import wait_for
from .conftest import Backend, ForkServer, ThreadIds
from .test_history import history_server, store_job

__all__ = ["history_server"]  # the fork server fixture, shared with the trials


class Actor:
    """Process A: one `act` job, stopped at a gate until `go()`."""

    def __init__(
        self, server: ForkServer, backend: Backend, tmp_path: Path, log: Path, **job: Any
    ) -> None:
        self.server = server
        self.gate = tmp_path / "gate"
        gates = {job.pop("window"): str(self.gate)} if "window" in job else {}
        self.job_id = server.submit(
            {**store_job(backend), "mode": "act", "log": str(log), "gates": gates, **job}
        )
        self.pid = int(self._line("CHILD")[2])

    def _line(self, word: str, timeout: float = 60) -> list[str]:
        return self.server.expect(word, job=self.job_id, timeout=timeout)

    def at_gate(self) -> None:
        wait_for(Path(f"{self.gate}.at"))

    def go(self) -> None:
        Path(f"{self.gate}.go").touch()

    def result(self) -> str:
        outcome = self._line("RESULT")[2]
        self._line("ALLDONE")
        return outcome

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        self._line("ALLDONE")


@pytest.fixture
def world(
    history_server: ForkServer, backend: Backend, tmp_path: Path, tid: ThreadIds
) -> Iterator[World]:
    store_job(backend)  # skips the memory store: it has no second process
    made = World(history_server, backend, tmp_path, tid("w"))
    try:
        yield made
    finally:
        made.store.close()


class World:
    """The thread, the log both sides write, B's own client, and the checker."""

    def __init__(self, server: ForkServer, backend: Backend, tmp_path: Path, thread: str) -> None:
        self.server, self.backend, self.tmp_path, self.thread = server, backend, tmp_path, thread
        self.log_path = tmp_path / "log"
        self.log = worker.Log(str(self.log_path))
        self.store: BaseCheckpointer = backend.make()

    def app(self, node_hook: Any = None) -> Any:
        return worker.build_app(self.store, self.log, self.thread, node_hook)

    def b_sends(self, k: int, **options: Any) -> str:
        """B sends turn k; with options (interrupt_before=...), a paused turn."""
        if options:
            self.log("send", self.thread, worker.input_id(self.thread, k))
            message = worker.HumanMessage(worker.turn_text(k), id=worker.input_id(self.thread, k))
            self.app().invoke({"messages": [message]}, thread_id=self.thread, **options)
            self.log("accepted", self.thread, worker.input_id(self.thread, k))
            return "accepted"
        return worker.send(self.app(), self.log, self.thread, k)

    def b_resumes(self) -> str:
        return worker.resume(self.app(), self.log, self.thread)

    def a(self, **job: Any) -> Actor:
        return Actor(
            self.server, self.backend, self.tmp_path, self.log_path, thread=self.thread, **job
        )

    def problems(self, turns: int, killed: set[int] | None = None) -> list[str]:
        return _history.check_threads(
            self.store, [self.thread], self.log_path, turns=turns, killed=killed or set()
        )

    def node_runs_of(self, pid: int) -> int:
        return sum(1 for e in _history.read_log(self.log_path) if e.pid == pid and e.kind == "node")


# -- a fresh input: read without the lease, written with it ------------------------------


@pytest.mark.parametrize("rule", [True, False], ids=["redelivery-rule", "without-it"])
def test_same_turn_written_by_another_inside_read_to_write_is_one_turn(
    world: World, rule: bool
) -> None:
    """A reads the head and builds turn 1; B sends the same turn 1 and finishes it;
    A's write then finds the head moved, starts over lease first, and finds its input
    in the thread: one turn 1, A runs no node. Without the rule (the engine before
    the fix) A ran turn 1 again on top of B's: the issue's lost input."""
    world.b_sends(0)
    a = world.a(action="send", k=1, window="put_and_acquire:before:0", no_redelivery=not rule)
    a.at_gate()
    assert world.b_sends(1) == "accepted"
    a.go()
    assert a.result() == "accepted"
    if rule:
        assert world.problems(turns=2) == []
        assert world.node_runs_of(a.pid) == 0
    else:
        problems = world.problems(turns=2)
        assert any("transcript" in p for p in problems) and any(
            "answered 2x" in p for p in problems
        )


def test_same_turn_decided_on_a_stale_state_is_one_turn(world: World) -> None:
    """The caller's own window: A decided on turn 1 from a state it read, and B's whole
    turn 1 lands before A's run even reads the head: A's input is a redelivery."""
    world.b_sends(0)
    a = world.a(action="send", k=1, window="head_and_pending:before:0")
    a.at_gate()
    assert world.b_sends(1) == "accepted"
    a.go()
    assert a.result() == "accepted"
    assert world.problems(turns=2) == []
    assert world.node_runs_of(a.pid) == 0


def test_new_turn_whose_head_moved_lands_after_the_other_turn(world: World) -> None:
    """A builds turn 2 on the head after turn 0; B's turn 1 lands first. A's write finds
    the head moved and starts over lease first: its turn 2 comes after turn 1, and
    nothing of its first attempt was stored."""
    world.b_sends(0)
    a = world.a(action="send", k=2, window="put_and_acquire:before:0")
    a.at_gate()
    assert world.b_sends(1) == "accepted"
    a.go()
    assert a.result() == "accepted"
    assert world.problems(turns=3) == []
    assert world.node_runs_of(a.pid) == 3  # agent, tools, agent of turn 2, once each


def test_input_write_that_meets_a_running_turn_is_refused_naming_it(world: World) -> None:
    """A reads the head; B takes the thread with turn 1 and is inside its first node
    when A writes: A stores nothing and is told B's run id."""
    world.b_sends(0)
    a = world.a(action="send", k=1, window="put_and_acquire:before:0")
    a.at_gate()
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        inside.set()
        assert release.wait(30)

    def b_turn() -> None:
        message = worker.HumanMessage("turn 1", id=worker.input_id(world.thread, 1))
        world.log("send", world.thread, message.id)
        world.app(hold).invoke({"messages": [message]}, thread_id=world.thread)
        world.log("accepted", world.thread, message.id)

    b = threading.Thread(target=b_turn)
    b.start()
    try:
        assert inside.wait(30)
        holder = world.store.read_lease(world.thread)
        assert holder is not None
        a.go()
        assert a.result() == f"refused {holder.run_id}"
    finally:
        release.set()
        b.join(30)
    assert world.node_runs_of(a.pid) == 0
    # B's node runs were blocked by `hold`, not by a kill: they are ordinary stored steps
    assert world.problems(turns=2) == []


# -- a resume: lease first, then the head --------------------------------------------------


def test_resume_holds_the_lease_before_it_reads_the_head(world: World) -> None:
    world.b_sends(0, interrupt_before=["tools"])
    assert world.app().get_state(world.thread).next == ("tools",)
    a = world.a(action="resume", window="head_and_pending:before:0")
    a.at_gate()
    lease = world.store.read_lease(world.thread)
    assert lease is not None and lease.owner.split("/")[1] == str(a.pid)
    assert world.b_resumes().startswith("refused")
    assert world.b_sends(1).startswith("refused")
    a.go()
    assert a.result() == "resumed"
    assert world.problems(turns=1) == []
    assert world.node_runs_of(a.pid) == 2  # tools, agent


def test_resume_that_finds_the_turn_finished_meanwhile_runs_nothing(world: World) -> None:
    world.b_sends(0, interrupt_before=["tools"])
    a = world.a(action="resume", window="acquire_lease:before:0")
    a.at_gate()
    assert world.b_resumes() == "resumed"
    a.go()
    assert a.result() == "resumed"
    assert world.problems(turns=1) == []
    assert world.node_runs_of(a.pid) == 0


# -- the last step: written with the lease's release -----------------------------------------


def test_last_step_keeps_the_thread_until_its_write(world: World) -> None:
    a = world.a(action="send", k=0, window="put_and_release:before:0")
    a.at_gate()
    assert world.b_sends(0).startswith("refused")
    assert world.b_sends(1).startswith("refused")
    a.go()
    assert a.result() == "accepted"
    assert world.problems(turns=1) == []


def test_after_the_last_write_the_thread_is_free_before_the_call_returns(world: World) -> None:
    a = world.a(action="send", k=0, window="put_and_release:after:0")
    a.at_gate()
    assert world.store.read_lease(world.thread) is None  # given back in the step's write
    assert world.b_sends(1) == "accepted"
    a.go()
    assert a.result() == "accepted"
    assert world.problems(turns=2) == []


# -- a kill inside a window --------------------------------------------------------------------


def test_killed_right_after_its_input_write_loses_no_input(world: World) -> None:
    world.b_sends(0)
    a = world.a(action="send", k=1, window="put_and_acquire:after:0")
    a.at_gate()
    a.kill()
    snap = world.app().get_state(world.thread)
    assert snap.next == ("agent",)  # the input is stored, its turn not run
    assert world.b_resumes() == "resumed"  # a dead holder of this machine: taken over at once
    assert world.problems(turns=2, killed={a.pid}) == []


# -- the lease's renewal -------------------------------------------------------------------------


def test_a_late_renewal_within_the_lease_keeps_the_thread(world: World) -> None:
    """A's keeper stalls at its first renewal (due after a third of the lease) for
    longer than a third but less than the lease: the thread stays A's throughout."""
    lease_s = 3.0
    world.store.lease_s = lease_s
    world.b_sends(0)
    a = world.a(action="send", k=1, lease_s=lease_s, window="renew_lease:before:0", block_node=0)
    a.at_gate()  # the keeper is at its first renewal, A's first node blocked
    started = time.monotonic()
    time.sleep(lease_s / 3)  # two thirds of the lease since its last renewal
    assert time.monotonic() - started < lease_s * 2 / 3
    assert world.b_resumes().startswith("refused")
    assert world.b_sends(2).startswith("refused")
    a.go()
    Path(f"{a.gate}-node.go").touch()
    assert a.result() == "accepted"
    assert world.problems(turns=2) == []


def test_a_run_stalled_past_its_lease_is_overtaken_and_stores_nothing(world: World) -> None:
    """A's keeper cannot renew and A's node stalls past the lease: B takes the expired
    lease and finishes the turn; A's step then fails its compare-and-set, so A's node
    run is the one a stalled (as a killed) process may waste, and nothing else."""
    lease_s = 1.0
    world.store.lease_s = lease_s
    world.b_sends(0)
    a = world.a(action="send", k=1, lease_s=lease_s, window="renew_lease:before:0", block_node=0)
    a.at_gate()
    deadline = time.monotonic() + 10 * lease_s
    while world.b_resumes().startswith("refused"):  # free once the lease ran out
        assert time.monotonic() < deadline, "the stalled run's lease never expired"
        time.sleep(lease_s / 10)
    a.go()
    Path(f"{a.gate}-node.go").touch()
    assert a.result().startswith("refused")
    assert world.problems(turns=2, killed={a.pid}) == []
    assert world.node_runs_of(a.pid) == 1
