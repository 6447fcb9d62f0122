"""Streams as the official client reads them: each mode's SSE events, reconnects, cancels."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from langgraph_sdk.schema import StreamPart

from .conftest import Connect, FakeLLM, Serve

HI = {"messages": [{"role": "user", "content": "hi"}]}


def events(parts: Any) -> list[tuple[str, Any]]:
    return [(p.event, p.data) for p in parts]


def test_values_updates_and_the_pause(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    thread_id = client.threads.create()["thread_id"]

    got = events(
        client.runs.stream(thread_id, "agent", input=HI, stream_mode=["values", "updates"])
    )
    names = [name for name, _ in got]
    (run,) = client.runs.list(thread_id)

    assert names == ["metadata", "values", "updates", "values", "updates", "values"]
    assert got[0][1] == {"run_id": run["run_id"], "attempt": 1}
    assert [m["content"] for m in got[1][1]["messages"]] == ["hi"]
    assert got[2][1]["reply"]["messages"][0]["content"] == "echo: hi"
    assert got[2][1]["reply"]["n"] == 1
    interrupt = got[4][1]["__interrupt__"]
    assert interrupt[0]["value"] == {"question": "Approve?"}
    assert got[5][1]["__interrupt__"] == interrupt
    assert [m["content"] for m in got[5][1]["messages"]] == ["hi", "echo: hi"]

    resumed = events(client.runs.stream(thread_id, "agent", command={"resume": "ok"}))
    assert [n for n, _ in resumed] == ["metadata", "values", "values"]
    assert [m["content"] for m in resumed[1][1]["messages"]] == ["hi", "echo: hi"]  # the start
    assert resumed[2][1]["messages"][-1]["content"] == "answer: ok"


def test_messages_tuple_streams_tokens_while_the_model_streams(
    serve: Serve, connect: Connect, llm: FakeLLM
) -> None:
    client = connect(serve(None, "chat", env={"FG_TEST_LLM_URL": llm.url}))
    arrived: list[tuple[float, StreamPart]] = []

    for part in client.runs.stream(None, "chat", input=HI, stream_mode="messages-tuple"):
        arrived.append((time.monotonic(), part))

    tokens = [(t, p.data) for t, p in arrived if p.event == "messages"]
    text = "".join(chunk["content"] for _, (chunk, _meta) in tokens)
    first, last = tokens[0][0], tokens[-1][0]
    chunk, meta = tokens[0][1]

    assert arrived[0][1].event == "metadata"
    assert text == "".join(llm.words)
    assert len(tokens) >= len(llm.words)
    assert chunk["type"] == "AIMessageChunk" and chunk["id"]
    assert {c["id"] for _, (c, _m) in tokens} == {chunk["id"]}  # one reply, one id
    assert meta["langgraph_node"] == "model" and meta["langgraph_step"] == 1
    # the words were sent 0.05 s apart: the client saw them spread out, not all at the end
    assert last - first >= 0.6 * llm.delay * (len(llm.words) - 1)


def test_messages_mode_partials_and_completes(serve: Serve, connect: Connect, llm: FakeLLM) -> None:
    llm.delay = 0.0
    client = connect(serve(None, "chat", "agent", env={"FG_TEST_LLM_URL": llm.url}))

    streamed = events(client.runs.stream(None, "chat", input=HI, stream_mode="messages"))
    returned = events(client.runs.stream(None, "agent", input=HI, stream_mode="messages"))

    partials = [d for n, d in streamed if n == "messages/partial"]
    metadata = [d for n, d in streamed if n == "messages/metadata"]
    assert len(metadata) == 1 and list(metadata[0]) == [partials[0][0]["id"]]
    assert [p[0]["content"] for p in partials][-1] == "".join(llm.words)
    assert partials[0][0]["content"] == llm.words[0]
    assert [n for n, _ in returned] == ["metadata", "messages/metadata", "messages/complete"]
    assert returned[2][1][0]["content"] == "echo: hi" and returned[2][1][0]["type"] == "ai"


def test_events_and_debug_modes(serve: Serve, connect: Connect, llm: FakeLLM) -> None:
    llm.delay = 0.0
    client = connect(serve(None, "chat", env={"FG_TEST_LLM_URL": llm.url}))

    got = events(client.runs.stream(None, "chat", input=HI, stream_mode=["events", "debug"]))

    kinds = [d["event"] for n, d in got if n == "events"]
    debug = [d["type"] for n, d in got if n == "debug"]
    assert kinds[0] == "on_chain_start" and kinds[-1] == "on_chain_end"
    assert "on_chat_model_stream" in kinds
    streamed = "".join(
        d["data"]["chunk"]["content"] for n, d in got
        if n == "events" and d["event"] == "on_chat_model_stream"
    )  # fmt: skip
    assert streamed == "".join(llm.words)
    assert debug[:1] == ["checkpoint"] and "task" in debug and "task_result" in debug


def test_failure_streams_an_error_event(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "fail"))

    got = events(client.runs.stream(None, "fail", input=HI, stream_mode=["values", "updates"]))

    assert [n for n, _ in got] == ["metadata", "values", "error"]
    assert got[-1][1]["error"] == "ValueError"
    assert got[-1][1]["message"].startswith("the node blew up")


def test_join_stream_resumes_after_last_event_id(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(
        thread_id, "slow", input={"delay": 0.3}, stream_mode=["values", "updates"]
    )
    run_id = run["run_id"]

    head: list[StreamPart] = []
    for part in client.runs.join_stream(thread_id, run_id):
        head.append(part)
        if len(head) == 2:
            break  # the client goes away after two events
    rest = list(client.runs.join_stream(thread_id, run_id, last_event_id=head[-1].id))
    whole = list(client.runs.join_stream(thread_id, run_id))  # the run is over: a replay
    only_updates = list(client.runs.join_stream(thread_id, run_id, stream_mode="updates"))

    assert [p.event for p in head] == ["metadata", "values"]
    assert [p.event for p in rest] == ["updates", "values", "updates", "values"]
    assert [(p.event, p.data) for p in head + rest] == [(p.event, p.data) for p in whole]
    assert [p.id for p in whole] == [str(i) for i in range(len(whole))]
    assert [p.event for p in only_updates] == ["metadata", "updates", "updates"]
    assert rest[-1].data["steps"] == ["one", "two"]


def test_cancel_mid_stream_leaves_the_thread_resumable(serve: Serve, connect: Connect) -> None:
    server = serve(None, "slow")
    client, other = connect(server), connect(server)
    thread_id = client.threads.create()["thread_id"]
    seen: list[str] = []
    cancelled = threading.Event()

    def cancel(run_id: str) -> None:
        time.sleep(0.3)  # node one (1 s) is running by now: the input step came first
        other.runs.cancel(thread_id, run_id)
        cancelled.set()

    modes = ["values", "updates"]
    for part in client.runs.stream(thread_id, "slow", input={"delay": 1.0}, stream_mode=modes):
        seen.append(part.event)
        if part.event == "metadata":
            run_id = part.data["run_id"]
        if len(seen) == 2:  # the input's values: the run's first step starts now
            threading.Thread(target=cancel, args=(run_id,)).start()

    run = client.runs.get(thread_id, run_id)
    state = client.threads.get_state(thread_id)
    resumed = client.runs.wait(thread_id, "slow", input=None)

    assert cancelled.is_set()
    # node one finished its step; two never started
    assert seen == ["metadata", "values", "updates", "values"]
    assert run["status"] == "interrupted"
    assert state["next"] == ["two"] and state["values"]["steps"] == ["one"]
    assert resumed["steps"] == ["one", "two"]


def test_on_disconnect_cancel_stops_the_run_with_its_client(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]
    stream = iter(
        client.runs.stream(
            thread_id, "slow", input={"delay": 0.6}, stream_mode="values", on_disconnect="cancel"
        )
    )
    run_id = next(stream).data["run_id"]
    assert next(stream).event == "values"  # the input: node one starts now
    time.sleep(0.2)
    stream.close()  # type: ignore[attr-defined]  # the client goes away

    for _ in range(100):
        if client.runs.get(thread_id, run_id)["status"] != "running":
            break
        time.sleep(0.05)

    assert client.runs.get(thread_id, run_id)["status"] == "interrupted"
    assert client.threads.get_state(thread_id)["next"] == ["two"]


def test_custom_mode_streams_what_nodes_write(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "nested", "agent"))

    got = events(client.runs.stream(None, "nested", input=HI, stream_mode=["custom", "updates"]))
    quiet = events(client.runs.stream(None, "agent", input=HI, stream_mode=["custom", "updates"]))

    # in the order written, before the update of the node that wrote them; a subgraph's
    # writes reach the stream as its node's
    assert got == [
        ("metadata", got[0][1]),
        ("custom", {"stage": "prep"}),
        ("updates", {"prep": {"messages": [got[2][1]["prep"]["messages"][0]]}}),
        ("custom", {"progress": 0.5}),
        ("custom", {"progress": 1.0}),
        ("updates", got[5][1]),
    ]
    assert got[2][1]["prep"]["messages"][0]["content"] == "prepared"
    assert list(got[5][1]) == ["child"]
    assert [n for n, _ in quiet] == ["metadata", "updates", "updates"]  # writes nothing


def test_stream_subgraphs_names_events_with_the_namespace(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "nested"))
    modes = ["custom", "updates", "values", "messages-tuple"]

    flat = events(client.runs.stream(None, "nested", input=HI, stream_mode=modes))
    got = events(
        client.runs.stream(None, "nested", input=HI, stream_mode=modes, stream_subgraphs=True)
    )
    names = [n for n, _ in got]
    inner = [n for n in names if "|" in n]
    namespace = inner[0].split("|", 1)[1]
    worked = [d for n, d in got if n == f"messages|{namespace}"]

    assert re.fullmatch(r"child:[0-9a-f-]+", namespace)
    assert inner == [
        f"values|{namespace}",  # the subgraph's input
        f"custom|{namespace}",
        f"custom|{namespace}",
        f"updates|{namespace}",
        f"messages|{namespace}",  # work's returned message, once
        f"values|{namespace}",
    ]
    assert [d for n, d in got if n == f"custom|{namespace}"] == [
        {"progress": 0.5},
        {"progress": 1.0},
    ]
    assert got[names.index(f"updates|{namespace}")][1]["work"]["messages"][0]["content"] == (
        "worked"
    )
    assert worked[0][0]["content"] == "worked"
    assert worked[0][1]["langgraph_checkpoint_ns"].startswith(f"{namespace}|work:")
    # the parent's own events: without subgraphs, the child's writes and its message came
    # as the child node's; with them, they come once, namespaced, and nothing is repeated
    parent = ["metadata", "values", "custom", "updates", "messages", "values"]
    assert [n for n, _ in flat] == [*parent, "custom", "custom", "updates", "messages", "values"]
    assert [n for n in names if "|" not in n] == [*parent, "updates", "values"]
    assert names.index(inner[-1]) < names.index("updates", 4)  # the child's steps come first
    assert got[-1][1]["messages"][-1]["content"] == "worked"
