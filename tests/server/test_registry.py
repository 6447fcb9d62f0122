"""The run registry on every store: documents, lost runs; copying and rolling back a thread.

One suite over the memory, SQLite, PostgreSQL and Redis backends (the last
two when their throw-away servers are configured), as the checkpointers'
conformance suite does.
"""

from __future__ import annotations

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
from flowgraph.checkpoint._lease import process_owner
from flowgraph.server._records.docs import DELETE
from flowgraph.server._records.registry import Registry, RunRecord, ThreadRecord, open_registry
from flowgraph.server._runs.rollback import copy_thread, roll_back

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


def _dead_owner() -> str:
    """An owner on this machine whose process has exited (as the thread lease writes it)."""
    probe = subprocess.Popen([sys.executable, "-c", "pass"])
    probe.wait()
    host = process_owner().split("/", 1)[0]
    return f"{host}/{probe.pid}/1"


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
