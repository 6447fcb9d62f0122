"""Several server processes on one store: any answers for any run; one writer per thread.

Each test runs on a SQLite file and, when their servers are up, on the
throw-away PostgreSQL and Redis (FLOWGRAPH_TEST_POSTGRES_URL / _REDIS_URL).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.errors import ConflictError

from .conftest import Connect, Serve, store_location

BACKENDS = ["sqlite", "postgres", "redis"]


def _wait_for(predicate: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.mark.parametrize("backend", BACKENDS)
def test_any_process_answers_for_any_run(
    backend: str, tmp_path: Path, serve: Serve, connect: Connect
) -> None:
    db = store_location(backend, tmp_path)
    a, b = connect(serve(db, "slow")), connect(serve(db, "slow"))
    thread_id = a.threads.create()["thread_id"]

    run = a.runs.create(thread_id, "slow", input={"delay": 0.4}, stream_mode=["values"])
    seen_by_b = b.runs.get(thread_id, run["run_id"])
    busy_for_b = b.threads.get(thread_id)["status"]
    streamed = [p.event for p in b.runs.join_stream(thread_id, run["run_id"])]
    joined = b.runs.join(thread_id, run["run_id"])

    assert seen_by_b["status"] in ("pending", "running")
    assert busy_for_b == "busy"
    assert streamed[0] == "metadata" and "values" in streamed
    assert joined["steps"] == ["one", "two"]
    assert [r["status"] for r in b.runs.list(thread_id)] == ["success"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_processes_racing_on_one_thread(
    backend: str, tmp_path: Path, serve: Serve, connect: Connect
) -> None:
    db = store_location(backend, tmp_path)
    a, b = connect(serve(db, "slow")), connect(serve(db, "slow"))
    thread_id = a.threads.create()["thread_id"]
    results: dict[str, Any] = {}
    start = threading.Barrier(2)

    def race(name: str, client: Any) -> None:
        start.wait()
        results[name] = client.runs.wait(thread_id, "slow", input={"delay": 0.2, "steps": [name]})

    racers = [threading.Thread(target=race, args=(n, c)) for n, c in (("a", a), ("b", b))]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(60)
    steps = a.threads.get_state(thread_id)["values"]["steps"]

    # both ran, one after the other: never interleaved
    assert steps in (["a", "one", "two", "b", "one", "two"], ["b", "one", "two", "a", "one", "two"])
    assert sorted(r["status"] for r in a.runs.list(thread_id)) == ["success", "success"]

    holder = a.runs.create(thread_id, "slow", input={"delay": 0.4})
    with pytest.raises(ConflictError):
        b.runs.create(thread_id, "slow", input={}, multitask_strategy="reject")
    b.runs.join(thread_id, holder["run_id"])
    assert len(b.runs.list(thread_id)) == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancel_from_another_process(
    backend: str, tmp_path: Path, serve: Serve, connect: Connect
) -> None:
    db = store_location(backend, tmp_path)
    a, b = connect(serve(db, "slow")), connect(serve(db, "slow"))
    thread_id = a.threads.create()["thread_id"]
    run = a.runs.create(thread_id, "slow", input={"delay": 1.5})
    _wait_for(lambda: a.runs.get(thread_id, run["run_id"])["status"] == "running")
    time.sleep(0.2)  # inside node one, which the stop lets finish

    b.runs.cancel(thread_id, run["run_id"], wait=True)

    assert a.runs.get(thread_id, run["run_id"])["status"] == "interrupted"
    assert a.threads.get_state(thread_id)["next"] == ["two"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_killed_server_then_a_new_one_resumes_the_thread(
    backend: str, tmp_path: Path, serve: Serve, connect: Connect
) -> None:
    db = store_location(backend, tmp_path)
    doomed = serve(db, "slow")
    client = connect(doomed)
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(thread_id, "slow", input={"delay": 1.5, "steps": ["start"]})
    _wait_for(
        lambda: "one" in (client.threads.get_state(thread_id)["values"] or {}).get("steps", [])
    )

    doomed.kill()  # SIGKILL in the middle of node two
    survivor = connect(serve(db, "slow"))
    lost = survivor.runs.get(thread_id, run["run_id"])
    thread = survivor.threads.get(thread_id)
    again = survivor.runs.create(thread_id, "slow", input=None)
    _wait_for(lambda: survivor.runs.get(thread_id, again["run_id"])["status"] == "success")
    resumed = survivor.runs.join(thread_id, again["run_id"])

    assert lost["status"] == "error"
    assert thread["status"] == "error" and thread["error"]["error"] == "RunLost"
    assert resumed["steps"] == ["start", "one", "two"]  # node one did not run again
    assert survivor.threads.get(thread_id)["status"] == "idle"
