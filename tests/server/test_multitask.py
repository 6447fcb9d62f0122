"""A second run on a busy thread: reject, enqueue, interrupt, rollback; cancel's two actions."""

from __future__ import annotations

import time

import pytest
from langgraph_sdk.errors import ConflictError, NotFoundError

from .conftest import Connect, Serve


def _wait_running(client: object, thread_id: str, run_id: str) -> None:
    """Until the run is inside its first node (its input step is stored just before)."""
    for _ in range(200):
        if client.runs.get(thread_id, run_id)["status"] == "running":  # type: ignore[attr-defined]
            time.sleep(0.15)
            return
        time.sleep(0.02)
    raise AssertionError("the run never started")


def _run_ids_in_history(client: object, thread_id: str) -> list[str]:
    history = client.threads.get_history(thread_id, limit=100)  # type: ignore[attr-defined]
    return [h["metadata"]["run_id"] for h in reversed(history)]


def test_reject_is_409_and_stores_nothing(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]
    first = client.runs.create(thread_id, "slow", input={"delay": 0.3})

    with pytest.raises(ConflictError, match="already running"):
        client.runs.create(thread_id, "slow", input={"steps": ["x"]}, multitask_strategy="reject")
    client.runs.join(thread_id, first["run_id"])

    assert [r["run_id"] for r in client.runs.list(thread_id)] == [first["run_id"]]
    assert client.threads.get_state(thread_id)["values"]["steps"] == ["one", "two"]


def test_enqueue_runs_after_the_current_run_in_order(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]

    runs = [
        client.runs.create(thread_id, "slow", input={"delay": 0.15, "steps": [f"in{i}"]})
        for i in range(3)
    ]
    statuses = [client.runs.get(thread_id, r["run_id"])["status"] for r in runs]
    client.runs.join(thread_id, runs[-1]["run_id"])

    assert statuses[1:] == ["pending", "pending"]
    assert client.threads.get_state(thread_id)["values"]["steps"] == [
        "in0", "one", "two", "in1", "one", "two", "in2", "one", "two"
    ]  # fmt: skip
    assert [client.runs.get(thread_id, r["run_id"])["status"] for r in runs] == ["success"] * 3
    ids = [r["run_id"] for r in runs]
    assert list(dict.fromkeys(_run_ids_in_history(client, thread_id))) == ids


def test_interrupt_stops_the_current_run_at_a_step_boundary(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]
    first = client.runs.create(thread_id, "slow", input={"delay": 0.4, "steps": ["a"]})
    _wait_running(client, thread_id, first["run_id"])

    second = client.runs.create(
        thread_id, "slow", input={"delay": 0.05, "steps": ["b"]}, multitask_strategy="interrupt"
    )
    client.runs.join(thread_id, second["run_id"])

    assert client.runs.get(thread_id, first["run_id"])["status"] == "interrupted"
    assert client.runs.get(thread_id, second["run_id"])["status"] == "success"
    # the first run's finished step stays; its second node never ran
    assert client.threads.get_state(thread_id)["values"]["steps"] == [
        "a", "one", "b", "one", "two"
    ]  # fmt: skip


def test_rollback_removes_the_current_run_and_its_checkpoints(
    serve: Serve, connect: Connect
) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]
    kept = client.runs.wait(thread_id, "slow", input={"delay": 0.0, "steps": ["kept"]})
    history_before = client.threads.get_history(thread_id, limit=100)
    doomed = client.runs.create(thread_id, "slow", input={"delay": 0.4, "steps": ["doomed"]})
    _wait_running(client, thread_id, doomed["run_id"])

    after = client.runs.create(
        thread_id, "slow", input={"delay": 0.0, "steps": ["after"]}, multitask_strategy="rollback"
    )
    client.runs.join(thread_id, after["run_id"])

    with pytest.raises(NotFoundError):
        client.runs.get(thread_id, doomed["run_id"])
    assert kept["steps"] == ["kept", "one", "two"]
    assert client.threads.get_state(thread_id)["values"]["steps"] == [
        "kept", "one", "two", "after", "one", "two"
    ]  # fmt: skip
    assert doomed["run_id"] not in _run_ids_in_history(client, thread_id)
    history = client.threads.get_history(thread_id, limit=100)
    assert history[len(history) - len(history_before) :] == history_before


def test_cancel_with_rollback_and_wait(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "slow", input={"delay": 0.0, "steps": ["first"]})
    run = client.runs.create(thread_id, "slow", input={"delay": 0.3, "steps": ["second"]})
    _wait_running(client, thread_id, run["run_id"])

    answer = client.runs.cancel(thread_id, run["run_id"], wait=True, action="rollback")

    with pytest.raises(NotFoundError):
        client.runs.get(thread_id, run["run_id"])
    assert answer == {}  # as LangGraph Server answers a cancelled run
    assert client.threads.get_state(thread_id)["values"]["steps"] == ["first", "one", "two"]
    assert client.threads.get(thread_id)["status"] == "idle"


def test_cancel_a_queued_run(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]
    running = client.runs.create(thread_id, "slow", input={"delay": 0.2, "steps": ["r"]})
    queued = client.runs.create(thread_id, "slow", input={"delay": 0.0, "steps": ["q"]})

    client.runs.cancel(thread_id, queued["run_id"])
    client.runs.join(thread_id, running["run_id"])
    time.sleep(0.3)

    assert client.runs.get(thread_id, queued["run_id"])["status"] == "interrupted"
    assert client.threads.get_state(thread_id)["values"]["steps"] == ["r", "one", "two"]


def test_state_updates_wait_for_no_run(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(thread_id, "slow", input={"delay": 0.4, "steps": ["a"]})
    _wait_running(client, thread_id, run["run_id"])

    with pytest.raises(ConflictError, match="busy"):
        client.threads.update_state(thread_id, {"steps": ["edit"]})
    client.runs.join(thread_id, run["run_id"])
    client.threads.update_state(thread_id, {"steps": ["edit"]})

    assert client.threads.get_state(thread_id)["values"]["steps"] == ["a", "one", "two", "edit"]
