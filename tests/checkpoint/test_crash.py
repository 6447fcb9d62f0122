"""Crash safety with real processes: SIGKILL at any point of a step loses nothing committed.

A forked worker (`_crash_worker.py`) runs a tool-calling conversation on a
SQLite file and is killed inside a node, inside the checkpoint transaction,
and at random moments while it writes large messages. Each time the file
must open with its last checkpoint intact, and resuming (here, or in a
fresh process) must finish the thread with the exact transcript: no
message lost, none duplicated, one linear history.
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
import time
from pathlib import Path

import pytest

from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

from ._crash_worker import TURNS, build_app, digest, expected_transcript, finish, transcript
from .conftest import ForkServer

STEPS = 2 * TURNS + 1
"""Loop steps of a finished thread (agent and tools each turn, then the final agent)."""
BIG = 300_000
"""Bytes of padding per AI message in the random-kill trials: writes take a while."""


def agent_step(turn: int) -> int:
    return 2 * turn + 1


def kill_when(fork_server: ForkServer, job: dict[str, object], marker: str) -> list[str]:
    """Start `job`, wait for `marker` from it, SIGKILL it; the marker line."""
    job_id = fork_server.submit(job)
    pid = int(fork_server.expect("PID", job=job_id)[2])
    try:
        line = fork_server.expect(marker, job=job_id)
    finally:
        fork_server.kill(pid)
    status = int(fork_server.expect("EXIT", job=job_id)[2])
    assert status != 0, "the worker finished before it was killed"
    return line


def check_recovery(
    fork_server: ForkServer,
    path: Path,
    *,
    big: int = 0,
    last_step: int | None = None,
    in_fresh_process: bool = False,
) -> None:
    """The file opens, its last checkpoint is a clean prefix, and resuming finishes exactly."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    expected = expected_transcript(big)
    store = SQLiteCheckpointer(path)
    try:
        app = build_app(store, big=big)
        snapshot = app.get_state("t")
        got = transcript(snapshot.values.messages)
        assert got == expected[: len(got)]
        if last_step is not None:
            assert snapshot.step == last_step
        if in_fresh_process:
            job = fork_server.submit(
                {"mode": "resume", "path": str(path), "thread": "t", "big": big}
            )
            done = fork_server.expect("DONE", job=job, timeout=60)
            assert int(fork_server.expect("EXIT", job=job)[2]) == 0
            assert done[2] == digest(expected)
        else:
            out = finish(app, "t")
            assert transcript(out.messages) == expected
        final = app.get_state("t")
        assert transcript(final.values.messages) == expected
        ids = [m.id for m in final.values.messages]
        assert len(set(ids)) == len(ids)
        assert final.next == ()
        history = list(app.get_state_history("t", before_inputs=False))
        assert [h.step for h in history] == list(range(STEPS, -1, -1))
        assert [h.parent_id for h in history] == [h.checkpoint_id for h in history[1:]] + [None]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("node", "turn"),
    [("agent", 0), ("tool_a", 1), ("tool_b", 2), ("tool_b", 3), ("agent", TURNS)],
)
def test_kill_inside_a_node(fork_server: ForkServer, tmp_path: Path, node: str, turn: int) -> None:
    path = tmp_path / "c.db"
    job = {"mode": "run", "path": str(path), "thread": "t", "pause_node": node, "pause_turn": turn}
    kill_when(fork_server, job, "IN_NODE")
    step = agent_step(turn) if node == "agent" else agent_step(turn) + 1
    check_recovery(fork_server, path, last_step=step - 1, in_fresh_process=turn % 2 == 1)


@pytest.mark.parametrize("step", [0, 1, 2, 5, STEPS])
def test_kill_inside_the_checkpoint_transaction(
    fork_server: ForkServer, tmp_path: Path, step: int
) -> None:
    path = tmp_path / "c.db"
    kill_when(
        fork_server, {"mode": "run", "path": str(path), "thread": "t", "pause_step": step}, "IN_TX"
    )
    check_recovery(fork_server, path, last_step=step - 1, in_fresh_process=step % 2 == 1)


@pytest.mark.parametrize("seed", range(10))
def test_kill_at_a_random_moment_of_large_writes(
    fork_server: ForkServer, tmp_path: Path, seed: int
) -> None:
    """Killed after a random checkpoint started plus a random delay: in a write, or just after."""
    rng = random.Random(seed)
    path = tmp_path / "c.db"
    job_id = fork_server.submit({"mode": "run", "path": str(path), "thread": "t", "big": BIG})
    pid = int(fork_server.expect("PID", job=job_id)[2])
    target = rng.randrange(STEPS + 1)
    try:
        while True:
            parts = fork_server.expect("PUT", job=job_id)
            if int(parts[2]) >= target:
                break
        time.sleep(rng.uniform(0, 0.02))
    finally:
        fork_server.kill(pid)
    fork_server.expect("EXIT", job=job_id)
    check_recovery(fork_server, path, big=BIG, in_fresh_process=seed % 3 == 0)
