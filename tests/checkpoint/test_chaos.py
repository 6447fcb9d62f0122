"""Chaos: real processes SIGKILLed at random points of a step, and processes racing.

Every trial runs the path users take (ModelNode, ToolNode with side-effect
tools, tools_condition) in a forked child (`_chaos_worker.py`) that kills
itself at a random point: before a node, inside a tool, between a tool's
return and the step's checkpoint, inside the checkpoint write. A fresh
process then finishes the thread. Every trial checks: the transcript is
exact (nothing lost, nothing twice), every thread finished, its history is
one line, every tool call that returned ran once (a call cut off mid-way
ran again, as documented), no model reply was paid twice, and no node ran
more than once beyond the one the kill cut off.

Trials per backend: `FLOWGRAPH_CHAOS_TRIALS` scales them (default 1: 100 on
SQLite, 30 on PostgreSQL and 30 on Redis, as `.ci/run` runs them; e.g. 10
for a long soak).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.graph._thread.record import load_pending

from . import _chaos_worker as chaos
from .conftest import Backend, ForkServer, ThreadIds, serving

WORKER = Path(__file__).with_name("_chaos_worker.py")
SCALE = float(os.environ.get("FLOWGRAPH_CHAOS_TRIALS", "1"))
TRIALS = {"sqlite": 100, "postgres": 30, "redis": 30}
TURNS = 2
NODE_RUNS = 3 * TURNS
"""agent, tools, agent per turn."""
POINTS = {
    # kill point -> how many of its events one uninterrupted drive has
    "before_node": NODE_RUNS,
    "in_tool": 2 * TURNS,
    "after_tool": TURNS,
    "in_write": 4 * TURNS,  # the input step, agent, tools, agent
}


@pytest.fixture(scope="session")
def chaos_server() -> Iterator[ForkServer]:
    yield from serving(WORKER)


def job_lines(server: ForkServer, job: str, timeout: float = 120) -> list[list[str]]:
    """Every line of `job` until its ALLDONE (lines of other jobs are dropped)."""
    lines = []
    while True:
        parts = server.next_line(timeout)
        if len(parts) > 1 and parts[0] == job:
            if parts[1] == "ALLDONE":
                return lines
            lines.append(parts)


def store_job(backend: Backend) -> dict[str, Any]:
    if backend.path is None and backend.spec is None:
        pytest.skip(f"{backend.name}: no store shared between processes in this suite")
    return {"path": str(backend.path) if backend.path else None, "store": backend.spec}


def read_log(path: Path) -> list[tuple[int, str, str, str]]:
    rows = []
    for line in path.read_text().splitlines():
        pid, event, thread, detail = [*line.split(" ", 3), ""][:4]
        rows.append((int(pid), event, thread, detail))
    return rows


def check_thread(app: Any, thread: str, turns: int) -> None:
    """Finished, exact, ids unique, and its history one line."""
    snapshot = app.get_state(thread)
    assert snapshot.next == () and snapshot.active_run is None
    messages = snapshot.values.messages
    assert [(m.type, m.text) for m in messages] == chaos.expected_transcript(turns)
    ids = [m.id for m in messages]
    assert len(set(ids)) == len(ids)
    history = list(app.get_state_history(thread, before_inputs=False))
    assert [h.parent_id for h in history] == [h.checkpoint_id for h in history[1:]] + [None]
    assert [h.step for h in history] == list(range(len(history) - 1, -1, -1))


def check_effects(
    log: list[tuple[int, str, str, str]],
    thread: str,
    turns: int,
    *,
    kills: int,
    stored: set[str] | None = None,
    cut_model_calls: int = 0,
) -> None:
    """Side effects and model calls once each; node runs at most `kills` extra.

    `stored`: the tool calls whose result was stored (by `once`, or in the
    state) when the process was killed: each must have run exactly once. A
    call in flight at the kill (the killed one, or its parallel sibling whose
    result was not stored yet) may run again, as documented: at most
    `2 * kills` repeats in all. `cut_model_calls`: kills that may have landed
    while a model call was in flight (a timer's); a kill at a named point
    never cuts one off, so then no reply is paid twice.
    """
    mine = [row for row in log if row[2] == thread]
    done = Counter(detail for _, event, _, detail in mine if event == "done")
    calls = [f"{thread}-{k}-{kind}" for k in range(turns) for kind in ("mail", "charge")]
    assert set(done) == set(calls), "a tool call never ran"
    for call in stored or ():
        assert done[call] == 1, f"{call} had returned and was stored, yet ran {done[call]} times"
    assert sum(done.values()) - len(calls) <= 2 * kills, f"tool calls repeated: {done}"
    models = Counter(detail for _, event, _, detail in mine if event == "model")
    assert set(models) == {str(k) for k in range(turns)}
    extra = sum(models.values()) - 2 * turns
    assert 0 <= extra <= cut_model_calls, f"a model reply was paid twice: {models}"
    nodes = [detail for _, event, _, detail in mine if event == "node"]
    assert len(nodes) - 3 * turns <= kills, f"{len(nodes)} node runs for {3 * turns}"


def stored_calls(store: BaseCheckpointer, app: Any, thread: str) -> set[str]:
    """Tool calls whose results the store holds now: answered in the state, or kept by once."""
    snapshot = app.get_state(thread)
    if snapshot.checkpoint_id is None:
        return set()
    answered = {m.tool_call_id for m in snapshot.values.messages if m.type == "tool"}
    kept = {
        key.removeprefix("tool_call:")
        for task in load_pending(store, thread, snapshot.checkpoint_id).values()
        for key in task.memo
        if key.startswith("tool_call:")
    }
    return answered | kept


def extra_runs(log: list[tuple[int, str, str, str]], turns: int) -> dict[str, list[Any]]:
    """The events of each thread whose nodes ran more often than its turns need."""
    by_thread: dict[str, list[Any]] = {}
    for row in log:
        by_thread.setdefault(row[2], []).append(row)
    return {
        thread: rows
        for thread, rows in by_thread.items()
        if sum(1 for row in rows if row[1] == "node") > 3 * turns
    }


def app_for(store: BaseCheckpointer, log_path: Path, thread: str) -> Any:
    return chaos.build_app(store, chaos.Log(str(log_path)), chaos.Killer(None), thread)


def test_sigkill_at_random_points_loses_nothing_and_repeats_nothing(
    chaos_server: ForkServer, backend: Backend, tid: ThreadIds, tmp_path: Path
) -> None:
    where = store_job(backend)
    trials = max(1, round(TRIALS[backend.name] * SCALE))
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    log_path = tmp_path / "events.log"
    plan = []
    for trial in range(trials):
        point = rng.choice(list(POINTS))
        kill = {"point": point, "at": rng.randrange(POINTS[point])}
        if point == "in_write":
            kill["delay_us"] = rng.choice([0, 50, 200, 1000, 3000])
        plan.append((tid(f"trial{trial}"), kill))
    died = Counter[str]()
    stored: dict[str, set[str]] = {}
    store = backend.make()
    for thread, kill in plan:
        job = chaos_server.submit(
            {
                "mode": "drive",
                **where,
                "threads": [thread],
                "turns": TURNS,
                "log": str(log_path),
                "kill": kill,
            }
        )
        lines = job_lines(chaos_server, job)
        (exit_line,) = [p for p in lines if p[1] == "EXIT"]
        killed = int(exit_line[2]) != 0
        assert not any(p[1] == "ERROR" for p in lines), (seed, kill, lines)
        died[kill["point"]] += killed
        stored[thread] = stored_calls(store, app_for(store, log_path, thread), thread)
        job = chaos_server.submit(
            {"mode": "drive", **where, "threads": [thread], "turns": TURNS, "log": str(log_path)}
        )
        lines = job_lines(chaos_server, job)
        assert ["DONE"] == [p[1] for p in lines if p[1] in ("DONE", "ERROR")], (seed, kill, lines)
    try:
        log = read_log(log_path)
        for thread, kill in plan:
            app = app_for(store, log_path, thread)
            try:
                check_thread(app, thread, TURNS)
                timed = int(kill["point"] == "in_write")
                check_effects(
                    log, thread, TURNS, kills=1, stored=stored[thread], cut_model_calls=timed
                )
            except AssertionError as exc:
                raise AssertionError(f"seed {seed}, thread {thread}, kill {kill}: {exc}") from exc
    finally:
        store.close()
    # the kills really happened, at every kind of point (a timer may land after the end)
    assert died["before_node"] + died["in_tool"] + died["after_tool"] == sum(
        1 for _, k in plan if k["point"] != "in_write"
    )
    print(f"\n{backend.name}: {trials} trials (seed {seed}), kills by point: {dict(died)}")


def _slow_app(store: BaseCheckpointer) -> Any:
    """The race job's graph (its node's answer aside): reads and extends its threads."""
    from flowgraph import END, START, AIMessage, MessagesState, StateGraph

    g = StateGraph(MessagesState)
    g.add_node("slow", lambda s: {"messages": [AIMessage(f"answer to {s.messages[-1].text}")]})
    g.add_edge(START, "slow")
    g.add_edge("slow", END)
    return g.compile(checkpointer=store)


@pytest.mark.parametrize("continued", [False, True], ids=["new-thread", "continued-thread"])
@pytest.mark.parametrize("children", [2, 4, 8])
def test_racing_processes_one_proceeds_the_others_fail_fast_without_a_trace(
    chaos_server: ForkServer,
    backend: Backend,
    tid: ThreadIds,
    tmp_path: Path,
    children: int,
    continued: bool,
) -> None:
    """Each racer's input write takes the lease with it (`put_and_acquire`), on a new
    thread and on one with a turn already stored: one wins, the rest are refused."""
    where = store_job(backend)
    thread = tid()
    before: list[str] = []
    if continued:
        store = backend.make()
        try:
            setup = {"messages": [("user", "setup")]}
            _slow_app(store).invoke(setup, thread_id=thread)
        finally:
            store.close()
        before = ["setup", "answer to setup"]
    log_path = tmp_path / "events.log"
    hold = 1.5
    job = chaos_server.submit(
        {
            "mode": "race",
            **where,
            "threads": [thread],
            "children": children,
            "hold_s": hold,
            "log": str(log_path),
            "start_at": time.time() + 0.3,
        }
    )
    lines = job_lines(chaos_server, job)
    assert not any(p[1] == "ERROR" for p in lines), lines
    won = [p[2] for p in lines if p[1] == "WON"]
    refused = [p[2].split() for p in lines if p[1] == "REFUSED"]
    assert len(won) == 1 and len(refused) == children - 1, lines
    assert all(float(seconds) < hold / 2 for _, seconds, _ in refused), refused  # fast
    holders = {holder for _, _, holder in refused}
    assert len(holders) == 1 and "None" not in holders  # each refusal names the winner's run
    slowest = max(float(seconds) for _, seconds, _ in refused)
    print(f"\n{backend.name}: {children} racers, refused within {slowest * 1000:.1f} ms")
    ran = [detail for _, event, _, detail in read_log(log_path) if event == "node"]
    assert ran == [f"race {won[0]}"]  # no loser's node ran
    store = backend.make()
    try:
        app = _slow_app(store)
        texts = [m.text for m in app.get_state(thread).values.messages]
        assert texts == [*before, f"from {won[0]}", f"answer to {won[0]}"]
        assert store.read_lease(thread) is None
        history = list(app.get_state_history(thread, before_inputs=False))
        assert [h.parent_id for h in history] == [h.checkpoint_id for h in history[1:]] + [None]
    finally:
        store.close()


def test_workers_racing_over_many_threads_with_a_kill_waste_at_most_the_kill(
    chaos_server: ForkServer, backend: Backend, tid: ThreadIds, tmp_path: Path
) -> None:
    where = store_job(backend)
    threads = [tid(f"w{i}") for i in range(16)]
    turns = 3
    log_path = tmp_path / "events.log"
    workers = 4
    job = chaos_server.submit(
        {
            "mode": "worker",
            **where,
            "threads": threads,
            "turns": turns,
            "children": workers,
            "log": str(log_path),
            "go": str(tmp_path / "go"),
        }
    )
    pids = []
    while len(pids) < workers:
        parts = chaos_server.next_line(60)
        if len(parts) > 2 and parts[0] == job and parts[1] == "CHILD":
            pids.append(int(parts[2]))
    victim = random.choice(pids)
    # the workers start only now: on a loaded machine they could otherwise all be done
    # before this test got to read their pids, and the kill would find no work to cut
    (tmp_path / "go").touch()
    # kill one worker once some work is done, wherever it is
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if log_path.exists() and log_path.read_bytes().count(b"\n") > 40:
            break
        time.sleep(0.005)
    chaos_server.kill(victim)
    lines = job_lines(chaos_server, job)
    assert not any(p[1] == "ERROR" for p in lines), lines
    results = [json.loads(p[2]) for p in lines if p[1] == "RESULT"]
    assert len(results) == workers - 1, (victim, lines)  # 4: the work ended before the kill
    store = backend.make()
    try:
        log = read_log(log_path)
        nodes = sum(1 for _, event, _, _ in log if event == "node")
        assert nodes - 3 * turns * len(threads) <= 1, (victim, extra_runs(log, turns))
        for thread in threads:
            check_thread(app_for(store, log_path, thread), thread, turns)
            check_effects(log, thread, turns, kills=1, cut_model_calls=1)
    finally:
        store.close()
    refused = sum(r["refused"] for r in results)
    print(
        f"\n{backend.name}: {nodes} node runs for {3 * turns * len(threads)} needed, "
        f"{refused} refusals, 1 kill"
    )
