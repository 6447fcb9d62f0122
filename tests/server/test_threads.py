"""Threads through the official sync client: create, get, search, update, copy, state, history."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.errors import ConflictError, NotFoundError, UnprocessableEntityError

from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

from . import apps
from .conftest import Connect, Serve

HI = {"messages": [{"role": "user", "content": "hi"}]}


def test_create_get_update_and_delete(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    thread_id = str(uuid.uuid4())

    created = client.threads.create(thread_id=thread_id, metadata={"user": "ann"})
    with pytest.raises(ConflictError):
        client.threads.create(thread_id=thread_id)
    again = client.threads.create(thread_id=thread_id, if_exists="do_nothing", metadata={"x": 1})
    updated = client.threads.update(thread_id, metadata={"plan": "pro"})
    fetched = client.threads.get(thread_id)
    client.threads.delete(thread_id)

    assert created["thread_id"] == thread_id and created["status"] == "idle"
    assert created["values"] is None
    assert again["metadata"] == {"user": "ann"}  # do_nothing: the existing thread, unchanged
    assert updated["metadata"] == {"user": "ann", "plan": "pro"}  # update merges
    assert fetched["metadata"] == updated["metadata"]
    with pytest.raises(NotFoundError):
        client.threads.get(thread_id)
    with pytest.raises(NotFoundError):
        client.threads.update(thread_id, metadata={})


def test_search_by_metadata_status_and_values_with_paging(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    tag = uuid.uuid4().hex
    made = [client.threads.create(metadata={"tag": tag, "i": i})["thread_id"] for i in range(3)]
    client.runs.wait(made[0], "agent", input=HI)  # pauses at the question: interrupted

    everything = client.threads.search(metadata={"tag": tag}, limit=10)
    interrupted = client.threads.search(metadata={"tag": tag}, status="interrupted")
    idle = client.threads.search(metadata={"tag": tag}, status="idle")
    by_values = client.threads.search(metadata={"tag": tag}, values={"n": 1})
    by_message = client.threads.search(
        values={"messages": [{"content": "echo: hi"}]}, metadata={"tag": tag}
    )
    first_page = client.threads.search(metadata={"tag": tag}, limit=2, offset=0)
    second_page = client.threads.search(metadata={"tag": tag}, limit=2, offset=2)
    one = client.threads.search(metadata={"tag": tag, "i": 2})

    assert sorted(t["thread_id"] for t in everything) == sorted(made)
    assert [t["thread_id"] for t in everything] == made[::-1]  # newest first
    assert [t["thread_id"] for t in interrupted] == [made[0]]
    assert sorted(t["thread_id"] for t in idle) == sorted(made[1:])
    assert [t["thread_id"] for t in by_values] == [made[0]]
    assert [t["thread_id"] for t in by_message] == [made[0]]
    assert [t["thread_id"] for t in first_page + second_page] == made[::-1]
    assert [t["thread_id"] for t in one] == [made[2]]
    assert client.threads.count(metadata={"tag": tag}) == 3
    selected = client.threads.search(metadata={"tag": tag}, select=["thread_id", "status"])
    assert [sorted(t) for t in selected] == [["status", "thread_id"]] * 3


def test_state_at_checkpoints_history_and_update_as_node(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "agent", input=HI)

    state = client.threads.get_state(thread_id)
    history = client.threads.get_history(thread_id, limit=10)
    first = history[-2]  # the input step; history[-1] is the checkpoint before the input
    first_id = first["checkpoint"]["checkpoint_id"]
    at_first = client.threads.get_state(thread_id, checkpoint_id=first_id)
    by_dict = client.threads.get_state(thread_id, checkpoint=first["checkpoint"])
    with_subgraphs = client.threads.get_state(thread_id, subgraphs=True)
    older = client.threads.get_history(thread_id, before=state["checkpoint"], limit=1)

    assert state["next"] == ["ask"]
    assert state["tasks"][0]["name"] == "ask"
    assert state["tasks"][0]["interrupts"] == [state["interrupts"][0]]
    assert state["interrupts"][0]["value"] == {"question": "Approve?"}
    assert [m["content"] for m in state["values"]["messages"]] == ["hi", "echo: hi"]
    assert history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint_id"]
    assert len(history) == 3 and history[0]["parent_checkpoint"] == history[1]["checkpoint"]
    assert history[1]["parent_checkpoint"] == history[2]["checkpoint"]
    assert history[2]["next"] == ["__start__"] and history[2]["values"]["messages"] == []
    assert history[2]["parent_checkpoint"] is None
    assert [m["content"] for m in at_first["values"]["messages"]] == ["hi"]
    assert by_dict["checkpoint"] == at_first["checkpoint"]
    assert with_subgraphs["values"] == state["values"]
    assert older[0]["checkpoint"] == first["checkpoint"]

    updated = client.threads.update_state(
        thread_id, {"messages": [{"type": "ai", "content": "approved by hand"}]}, as_node="ask"
    )
    after = client.threads.get_state(thread_id)

    assert updated["checkpoint"]["checkpoint_id"] == after["checkpoint_id"]
    assert after["next"] == [] and after["interrupts"] == []
    assert after["values"]["messages"][-1]["content"] == "approved by hand"
    assert after["values"]["messages"][-1]["type"] == "ai"
    assert client.threads.get(thread_id)["status"] == "idle"
    with pytest.raises(UnprocessableEntityError, match="as_node"):
        client.threads.update_state(thread_id, {}, as_node="nowhere")
    with pytest.raises(NotFoundError):
        client.threads.get_state(thread_id, checkpoint_id="no-such-checkpoint")

    # time travel: an update at the first checkpoint is a new branch from it, the new head
    forked = client.threads.update_state(
        thread_id, {"messages": [{"type": "human", "content": "hi again"}]}, checkpoint_id=first_id
    )
    branch = client.threads.get_state(thread_id)
    assert branch["checkpoint_id"] == forked["checkpoint"]["checkpoint_id"]
    assert branch["parent_checkpoint"]["checkpoint_id"] == first_id
    assert [m["content"] for m in branch["values"]["messages"]] == ["hi", "hi again"]
    with pytest.raises(NotFoundError):
        client.threads.update_state(thread_id, {}, checkpoint_id="no-such-checkpoint")


def test_copy_keeps_metadata_and_history(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    source = client.threads.create(metadata={"owner": "bo"})["thread_id"]
    client.runs.wait(source, "agent", input=HI)

    copied = client.threads.copy(source)
    copy_id = copied["thread_id"]
    copied_history = client.threads.get_history(copy_id)
    resumed = client.runs.wait(copy_id, "agent", command={"resume": "yes"})

    assert copy_id != source
    assert copied["metadata"]["owner"] == "bo"
    assert [h["values"] for h in copied_history] == [
        h["values"] for h in client.threads.get_history(source)
    ]
    assert len(copied_history) == 3 and copied["status"] == "interrupted"
    assert [m["content"] for m in resumed["messages"]] == ["hi", "echo: hi", "answer: yes"]
    assert client.threads.get_state(source)["next"] == ["ask"]  # the source did not move


def test_refusals_are_json_with_detail(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    http = client.http.client

    json_header = {"content-type": "application/json"}
    malformed = http.post("/threads", content=b"{nope", headers=json_header)
    not_object = http.post("/threads/search", json=[1, 2])
    wrong_type = http.post("/threads/search", json={"limit": "ten"})
    bad_choice = http.post("/threads", json={"if_exists": "maybe"})
    ignored = http.post("/threads", json={"unknown_field": 1, "metadata": {"k": "v"}})
    too_big = http.post("/threads", content=b"{" + b" " * (11 * 1024 * 1024) + b"}")
    deep = http.post("/threads", content=b'{"metadata": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    no_route = http.get("/no/such/route")

    assert malformed.status_code == 422 and "Invalid JSON" in malformed.json()["detail"]
    assert not_object.status_code == 422 and "JSON object" in not_object.json()["detail"]
    assert wrong_type.status_code == 422
    assert wrong_type.json()["detail"] == "Field 'limit' must be an integer, not a string"
    assert bad_choice.status_code == 422 and "'if_exists'" in bad_choice.json()["detail"]
    assert ignored.status_code == 200 and ignored.json()["metadata"] == {"k": "v"}
    assert too_big.status_code == 413 and "limit" in too_big.json()["detail"]
    assert deep.status_code == 422 and "nested too deeply" in deep.json()["detail"]
    assert no_route.status_code == 404 and "detail" in no_route.json()


def test_a_thread_s_graph_with_its_path(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    thread_id = client.threads.create()["thread_id"]
    empty = client.http.client.get(f"/threads/{thread_id}/graph", params={"format": "mermaid"})
    client.runs.wait(thread_id, "agent", input=HI)

    mermaid = client.http.client.get(f"/threads/{thread_id}/graph", params={"format": "mermaid"})
    svg = client.http.client.get(f"/threads/{thread_id}/graph")
    bad = client.http.client.get(f"/threads/{thread_id}/graph", params={"format": "gif"})

    assert empty.status_code == 200 and "reply" in empty.text
    assert mermaid.status_code == 200 and mermaid.text != empty.text  # the path is drawn
    assert f"thread {thread_id}" in mermaid.text
    assert svg.headers["content-type"].startswith("image/svg+xml") and "<svg" in svg.text
    assert bad.status_code == 422 and "'format'" in bad.json()["detail"]


def test_delete_stops_the_run_and_drops_the_queued_ones(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]
    first = client.runs.create(thread_id, "slow", input={"delay": 0.5})
    queued = client.runs.create(thread_id, "slow", input={"delay": 0.1})
    for _ in range(200):
        if client.runs.get(thread_id, first["run_id"])["status"] == "running":
            break
        time.sleep(0.02)

    client.threads.delete(thread_id)
    gone = [t["thread_id"] for t in client.threads.search(limit=1000)]
    # the delete answered once the run had stopped: the id is free for a new thread at once
    client.threads.create(thread_id=thread_id)
    again = client.runs.wait(thread_id, "slow", input={"delay": 0.0}, multitask_strategy="reject")
    time.sleep(1.0)  # a queued run of the deleted thread would have started by now

    assert thread_id not in gone
    with pytest.raises(NotFoundError):
        client.runs.get(thread_id, queued["run_id"])
    assert len(client.runs.list(thread_id)) == 1  # the new thread's own run only
    assert again["steps"] == ["one", "two"]
    assert client.threads.get_state(thread_id)["values"]["steps"] == ["one", "two"]


def test_delete_of_a_thread_a_script_is_running_is_409(
    serve: Serve, connect: Connect, tmp_path: Path
) -> None:
    client = connect(serve(None, "agent"))
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "agent", input=HI)
    script = apps.agent.with_checkpointer(SQLiteCheckpointer(tmp_path / "store.db"))
    script.claim_thread(thread_id, run_id="script-run")  # as a run of another program would
    try:
        with pytest.raises(ConflictError) as busy:
            client.threads.delete(thread_id)
    finally:
        script.release_thread(thread_id, run_id="script-run")
    kept = client.threads.get_state(thread_id)
    client.threads.delete(thread_id)

    assert "script-run" in busy.value.response.json()["detail"]
    assert kept["next"] == ["ask"]  # nothing was deleted while the script held it
    with pytest.raises(NotFoundError):
        client.threads.get(thread_id)


def test_editing_a_message_branches_from_the_checkpoint_before_it(
    serve: Serve, connect: Connect
) -> None:
    """What agent-chat-ui does to edit a message: it finds the checkpoint where the message
    first appears, and sends the edited message as new input at that checkpoint's parent
    (the checkpoint before the input, `next == ["__start__"]`)."""
    client = connect(serve(None, "chat"))
    thread_id = client.threads.create()["thread_id"]
    for text in ("one", "two"):
        client.runs.wait(
            thread_id, "chat", input={"messages": [{"type": "human", "content": text}]}
        )
    history = client.threads.get_history(thread_id, limit=20)
    assert [h["next"] for h in history] == [[], ["model"], ["__start__"]] * 2

    def texts(values: dict[str, Any]) -> list[str]:
        return [m["content"] for m in values.get("messages", [])]

    def edit(message_index: int, text: str) -> list[str]:
        seen = next(  # the oldest checkpoint that shows the message
            h for h in reversed(history) if len(h["values"].get("messages", [])) > message_index
        )
        before = seen["parent_checkpoint"]
        assert client.threads.get_state(thread_id, checkpoint=before)["next"] == ["__start__"]
        done = client.runs.wait(
            thread_id,
            "chat",
            input={"messages": [{"type": "human", "content": text}]},
            checkpoint=before,
        )
        assert isinstance(done, dict)
        return texts(done)

    assert edit(0, "ONE") == ["ONE", "You said ONE and I agree"]
    assert texts(client.threads.get_state(thread_id)["values"]) == [
        "ONE",
        "You said ONE and I agree",
    ]
    assert edit(2, "TWO") == [
        "one",
        "You said one and I agree",
        "TWO",
        "You said TWO and I agree",
    ]
    # both edits are branches: the first line is still in the history
    assert len(client.threads.get_history(thread_id, limit=100)) == 6 + 3 + 3
