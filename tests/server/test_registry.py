"""The run registry on every store: documents, thread claims, lost owners; copy and rollback.

One suite over the memory, SQLite, PostgreSQL and Redis backends (the last
two when their throw-away servers are configured), as the checkpointers'
conformance suite does.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flowgraph.checkpoint import BaseCheckpointer, MemoryCheckpointer, open_checkpointer
from flowgraph.server._docs import DELETE
from flowgraph.server._registry import Registry, RunRecord, ThreadRecord, open_registry
from flowgraph.server._rollback import copy_thread, roll_back

from .apps import slow
from .conftest import store_location

BACKENDS = ["memory", "sqlite", "postgres", "redis"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointer]:
    if request.param == "memory":
        checkpointer: BaseCheckpointer = MemoryCheckpointer()
    else:
        checkpointer = open_checkpointer(store_location(request.param, tmp_path))
    yield checkpointer
    checkpointer.close()


@pytest.fixture
def registry(store: BaseCheckpointer) -> Iterator[Registry]:
    opened = open_registry(store)
    yield opened
    opened.close()


def _other(registry: Registry, owner: str) -> Registry:
    """The same store as seen by another process (`owner`)."""
    other = Registry(registry.docs, lease_s=registry.lease_s)
    other.owner = owner
    return other


def _dead_owner() -> str:
    """An owner on this machine whose process has exited."""
    probe = subprocess.Popen([sys.executable, "-c", "pass"])
    probe.wait()
    return f"{socket.gethostname()}:{probe.pid}:deadbeef"


def test_documents_round_trip_and_update_atomically(registry: Registry) -> None:
    docs = registry.docs
    key = uuid.uuid4().hex
    thread = f"t-{key}"

    assert docs.insert("run", key, {"run_id": key, "thread_id": thread, "status": "pending",
                                    "created_at": 2.0})  # fmt: skip
    assert not docs.insert("run", key, {"run_id": key})
    docs.put("run", f"{key}-b", {"run_id": f"{key}-b", "thread_id": thread, "status": "running",
                                 "created_at": 1.0})  # fmt: skip
    changed = docs.update("run", key, lambda d: {**d, "status": "running"} if d else None)
    untouched = docs.update("run", key, lambda d: None)

    assert changed == untouched == {"run_id": key, "thread_id": thread, "status": "running",
                                    "created_at": 2.0}  # fmt: skip
    assert [d["run_id"] for d in docs.scan("run", thread_id=thread)] == [f"{key}-b", key]
    assert [d["run_id"] for d in docs.scan("run", thread_id=thread, status="running")] == [
        f"{key}-b", key]  # fmt: skip
    assert docs.update("run", key, lambda d: DELETE) is None
    assert docs.get("run", key) is None and docs.delete("run", f"{key}-b")
    assert docs.scan("run", thread_id=thread) == []


def test_concurrent_updates_lose_nothing(registry: Registry) -> None:
    key = uuid.uuid4().hex
    registry.docs.put("thread", key, {"count": 0})

    def bump() -> None:
        for _ in range(10):
            registry.docs.update("thread", key, lambda d: {"count": d["count"] + 1})

    workers = [threading.Thread(target=bump) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    assert registry.docs.get("thread", key) == {"count": 40}


def test_one_claim_per_thread_even_for_the_same_run(registry: Registry) -> None:
    other = _other(registry, "elsewhere:1:abc")  # pid 1 lives: a live owner
    thread_id = uuid.uuid4().hex

    assert registry.claim(thread_id, "r1") is None
    assert registry.claim(thread_id, "r1") is None  # the holder asking again keeps it
    blocked_other_run = other.claim(thread_id, "r2")
    blocked_same_run = other.claim(thread_id, "r1")
    other.release(thread_id, "r1")  # not its claim: nothing happens

    assert blocked_other_run is not None and blocked_other_run.run_id == "r1"
    assert blocked_same_run is not None and blocked_same_run.owner == registry.owner
    assert registry.holder(thread_id) is not None
    registry.release(thread_id, "r1")
    assert registry.holder(thread_id) is None
    assert other.claim(thread_id, "r2") is None


def test_a_dead_or_silent_holder_does_not_block(registry: Registry) -> None:
    dead = _other(registry, _dead_owner())
    silent = _other(registry, "another-host:123:abc")
    silent.lease_s = registry.lease_s = 0.3
    first, second = uuid.uuid4().hex, uuid.uuid4().hex

    assert dead.claim(first, "r-dead") is None
    assert silent.claim(second, "r-silent") is None
    taken_from_dead = registry.claim(first, "r-new")
    blocked_by_silent = registry.claim(second, "r-new")
    time.sleep(0.4)
    taken_from_silent = registry.claim(second, "r-new")

    assert taken_from_dead is None  # same machine, process gone: at once
    assert blocked_by_silent is not None  # another machine: until its lease runs out
    assert taken_from_silent is None


def test_runs_of_a_lost_process_are_marked_once(registry: Registry) -> None:
    now = time.time()
    thread_id = uuid.uuid4().hex
    registry.create_thread(ThreadRecord(thread_id=thread_id, created_at=now, updated_at=now))
    run = RunRecord(run_id=uuid.uuid4().hex, thread_id=thread_id, assistant_id="a",
                    graph_id="g", created_at=now, updated_at=now, status="running",
                    owner=_dead_owner(), heartbeat=now)  # fmt: skip
    registry.put_run(run)

    lost = registry.is_lost(run)
    marked = registry.mark_lost(run, {"error": "RunLost", "message": "gone"})
    again = registry.mark_lost(run, {"error": "RunLost", "message": "gone"})

    assert lost
    assert marked is not None and marked.status == "error" and marked.error["error"] == "RunLost"
    assert again is None
    assert [r.status for r in registry.runs_of(thread_id)] == ["error"]
    assert registry.delete_thread(thread_id) and registry.runs_of(thread_id) == []


def _steps(app: Any, thread_id: str) -> list[str]:
    return list(app.get_state(thread_id).values.steps)


def test_copy_and_roll_back_a_thread(store: BaseCheckpointer) -> None:
    app = slow.with_checkpointer(store)
    thread_id, copy_id = uuid.uuid4().hex, uuid.uuid4().hex
    app.invoke({"delay": 0, "steps": ["a"]}, thread_id=thread_id)
    head_before = store.head(thread_id)
    history_before = [s.checkpoint_id for s in app.get_state_history(thread_id)]
    app.invoke({"delay": 0, "steps": ["b"]}, thread_id=thread_id)

    copied = copy_thread(app, thread_id, copy_id)
    removed = roll_back(app, thread_id, head_before)

    assert copied == 6 and _steps(app, copy_id) == ["a", "one", "two", "b", "one", "two"]
    assert removed == 3
    assert _steps(app, thread_id) == ["a", "one", "two"]
    assert [s.checkpoint_id for s in app.get_state_history(thread_id)] == history_before
    app.invoke({"delay": 0, "steps": ["c"]}, thread_id=thread_id)  # the thread goes on
    assert _steps(app, thread_id) == ["a", "one", "two", "c", "one", "two"]
    assert roll_back(app, copy_id, None) == 6 and store.head(copy_id) is None
