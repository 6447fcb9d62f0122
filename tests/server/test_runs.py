"""Runs through the official sync client: wait, background runs, resume, errors, options."""

from __future__ import annotations

import time

import httpx
import pytest
from langgraph_sdk.errors import NotFoundError
from models._loopback import LoopbackServer, Reply

from .conftest import Connect, Serve

HI = {"messages": [{"role": "user", "content": "hi"}]}


def test_wait_pauses_at_the_interrupt_then_resumes(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    thread_id = client.threads.create()["thread_id"]

    paused = client.runs.wait(thread_id, "agent", input=HI)
    thread = client.threads.get(thread_id)
    (run,) = client.runs.list(thread_id)
    resumed = client.runs.wait(thread_id, "agent", command={"resume": "yes"})

    assert [m["content"] for m in paused["messages"]] == ["hi", "echo: hi"]
    assert paused["__interrupt__"][0]["value"] == {"question": "Approve?"}
    assert paused["n"] == 1
    assert thread["status"] == "interrupted"
    assert list(thread["interrupts"].values()) == [paused["__interrupt__"]]
    assert run["status"] == "success"  # a paused run ended well; its thread waits
    assert [m["content"] for m in resumed["messages"]] == ["hi", "echo: hi", "answer: yes"]
    assert "__interrupt__" not in resumed
    assert client.threads.get(thread_id)["status"] == "idle"
    messages = client.threads.get_state(thread_id)["values"]["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "ai"]


def test_messages_travel_as_langchain_dicts(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    sent = [
        {"type": "human", "content": "first", "id": "h1", "additional_kwargs": {},
         "response_metadata": {}, "example": False},
        {"type": "ai", "content": "", "id": "a1", "tool_calls": [
            {"name": "lookup", "args": {"q": "x"}, "id": "call1", "type": "tool_call"}],
         "invalid_tool_calls": [], "usage_metadata": {"input_tokens": 3, "output_tokens": 2,
                                                      "total_tokens": 5}},
        {"type": "tool", "content": "found", "tool_call_id": "call1", "id": "t1"},
        ["user", "then this"],
    ]  # fmt: skip

    out = client.runs.wait(None, "agent", input={"messages": sent})
    ai, tool = out["messages"][1], out["messages"][2]

    assert [m["type"] for m in out["messages"]] == ["human", "ai", "tool", "human", "ai"]
    assert out["messages"][0]["id"] == "h1"
    assert ai["tool_calls"] == [{"name": "lookup", "args": {"q": "x"}, "id": "call1",
                                 "type": "tool_call"}]  # fmt: skip
    assert ai["usage_metadata"] == {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}
    assert ai["invalid_tool_calls"] == [] and ai["additional_kwargs"] == {}
    assert tool["tool_call_id"] == "call1" and tool["status"] == "success"
    assert out["messages"][-1]["content"] == "echo: then this"


def test_failed_run_answers_error_and_marks_thread(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "fail"))
    thread_id = client.threads.create()["thread_id"]

    with pytest.raises(Exception, match="ValueError: the node blew up"):
        client.runs.wait(thread_id, "fail", input=HI)
    raw = client.runs.wait(thread_id, "fail", input=HI, raise_error=False)
    (last, first) = client.runs.list(thread_id)
    thread = client.threads.get(thread_id)

    assert raw == {"__error__": {"error": "ValueError", "message": raw["__error__"]["message"]}}
    assert raw["__error__"]["message"].startswith("the node blew up")
    assert first["status"] == last["status"] == "error"
    assert thread["status"] == "error"
    assert thread["error"]["error"] == "ValueError"


def test_background_run_join_get_and_list(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]

    run = client.runs.create(thread_id, "slow", input={"delay": 0.3}, metadata={"who": "test"})
    busy = client.threads.get(thread_id)["status"]
    joined = client.runs.join(thread_id, run["run_id"])
    fetched = client.runs.get(thread_id, run["run_id"])
    listed = client.runs.list(thread_id)

    assert run["status"] in ("pending", "running")
    assert run["metadata"]["who"] == "test" and run["multitask_strategy"] == "enqueue"
    assert busy == "busy"
    assert joined["steps"] == ["one", "two"]
    assert fetched["status"] == "success" and fetched["run_id"] == run["run_id"]
    assert [r["run_id"] for r in listed] == [run["run_id"]]
    assert client.runs.list(thread_id, status="error") == []
    with pytest.raises(NotFoundError):
        client.runs.get(thread_id, "00000000-0000-0000-0000-000000000000")
    client.runs.delete(thread_id, run["run_id"])
    assert client.runs.list(thread_id) == []


def test_stateless_runs_delete_their_thread_unless_kept(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    before = {t["thread_id"] for t in client.threads.search(limit=100)}
    kept_ids: list[str] = []

    gone = client.runs.wait(None, "agent", input=HI)
    kept = client.runs.wait(
        None,
        "agent",
        input=HI,
        on_completion="keep",
        on_run_created=lambda meta: kept_ids.append(str(meta["thread_id"])),
    )
    after = {t["thread_id"] for t in client.threads.search(limit=100)}

    assert [m["content"] for m in gone["messages"]] == ["hi", "echo: hi"]
    assert kept["__interrupt__"][0]["value"] == {"question": "Approve?"}
    assert after - before == set(kept_ids) and len(kept_ids) == 1
    assert client.threads.get_state(kept_ids[0])["next"] == ["ask"]


def test_breakpoints_fork_and_thread_creation(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    thread_id = client.threads.create()["thread_id"]

    before = client.runs.wait(thread_id, "agent", input=HI, interrupt_before=["reply"])
    state = client.threads.get_state(thread_id)
    go_on = client.runs.wait(thread_id, "agent", input=None, interrupt_after=["reply"])
    after = client.threads.get_state(thread_id)
    history = client.threads.get_history(thread_id)
    # the input step (paused before "reply"), and the checkpoint before the input
    first = history[-2]["checkpoint"]["checkpoint_id"]
    before_input = history[-1]["checkpoint"]["checkpoint_id"]
    forked = client.runs.wait(
        thread_id, "agent", input={"messages": [{"role": "user", "content": "again"}]},
        checkpoint_id=first,
    )  # fmt: skip
    edited = client.runs.wait(
        thread_id, "agent", input={"messages": [{"role": "user", "content": "instead"}]},
        checkpoint_id=before_input,
    )  # fmt: skip

    assert [m["content"] for m in before["messages"]] == ["hi"]
    assert state["next"] == ["reply"] and state["interrupts"] == []
    assert client.runs.list(thread_id)[0]["status"] == "success"
    assert [m["content"] for m in go_on["messages"]] == ["hi", "echo: hi"]
    assert after["next"] == ["ask"]
    assert [h["next"] for h in history[-2:]] == [["reply"], ["__start__"]]
    assert [m["content"] for m in forked["messages"]] == ["hi", "again", "echo: again"]
    assert [m["content"] for m in edited["messages"]] == ["instead", "echo: instead"]

    with pytest.raises(httpx.HTTPStatusError) as missing:
        client.runs.wait("no-such-thread", "agent", input=HI)
    created = client.runs.wait("made-by-run", "agent", input=HI, if_not_exists="create")
    assert missing.value.response.status_code == 404
    assert created["n"] == 1
    assert client.threads.get("made-by-run")["metadata"]["graph_id"] == "agent"


def test_invalid_run_requests_are_422_naming_the_field(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    http = client.http.client
    thread_id = client.threads.create()["thread_id"]
    url = f"/threads/{thread_id}/runs/wait"

    def detail(body: dict[str, object]) -> str:
        response = http.post(url, json={"assistant_id": "agent", **body})
        assert response.status_code == 422, response.text
        return str(response.json()["detail"])

    assert "'stream_mode'" in detail({"stream_mode": ["values", "tasks"]})
    assert "'tasks'" in detail({"stream_mode": "tasks"})
    assert "'input.messages[0]'" in detail({"input": {"messages": [5]}})
    assert "'input'" in detail({"input": [1, 2]})
    assert "'interrupt_before'" in detail({"interrupt_before": ["nowhere"]})
    assert "'multitask_strategy'" in detail({"multitask_strategy": "shove"})
    assert "'command.goto' names 'nowhere'" in detail({"command": {"goto": "nowhere"}})
    assert "'command.goto[1]'" in detail({"command": {"goto": ["ask", 3]}})
    assert "'command.goto[0]' names 'x'" in detail({"command": {"goto": [{"node": "x"}]}})
    assert "'command.update'" in detail({"command": {"update": "n=3"}})
    assert "'command.update.messages[0]'" in detail({"command": {"update": {"messages": [5]}}})
    assert "'config.recursion_limit'" in detail({"config": {"recursion_limit": "many"}})
    missing = http.post(url, json={"input": {}})
    assert missing.status_code == 422 and "'assistant_id'" in missing.json()["detail"]
    assert client.runs.list(thread_id) == []  # nothing was stored for a refused run


def test_command_goto_routes_the_thread_to_a_node(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "agent"))
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "agent", input=HI)
    client.runs.wait(thread_id, "agent", command={"resume": "ok"})  # the thread is done

    again = {"messages": [{"role": "user", "content": "again"}]}
    routed = client.runs.wait(thread_id, "agent", command={"update": again, "goto": "reply"})
    input_step = client.threads.get_history(thread_id, limit=2)[1]
    both = client.runs.stream(
        thread_id,
        "agent",
        command={"resume": "yes", "update": [["n", 10]], "goto": ["reply"]},
        stream_mode="updates",
    )
    updates = [p.data for p in both if p.event == "updates"]
    final = client.threads.get_state(thread_id)

    # the update went in as the run's input, then reply ran (not START's edges), then ask
    assert [m["content"] for m in routed["messages"][-2:]] == ["again", "echo: again"]
    assert routed["n"] == 2 and routed["__interrupt__"][0]["value"] == {"question": "Approve?"}
    assert input_step["metadata"]["source"] == "input" and input_step["next"] == ["reply"]
    # resume, update and goto at once: ask got its answer and reply ran in the same step
    assert [list(u) for u in updates] == [["ask"], ["reply"], ["__interrupt__"]]
    assert updates[0]["ask"]["messages"][0]["content"] == "answer: yes"
    assert updates[1]["reply"]["n"] == 11
    assert final["next"] == ["ask"] and final["values"]["n"] == 11


def test_run_metadata_and_recursion_limit_from_config(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]

    limited = client.runs.wait(
        thread_id, "slow", input={"delay": 0}, config={"recursion_limit": 1}, raise_error=False
    )
    (run,) = client.runs.list(thread_id)

    assert limited["__error__"]["error"] == "GraphRecursionError"
    assert run["kwargs"]["config"]["recursion_limit"] == 1
    assert run["kwargs"]["config"]["configurable"]["thread_id"] == thread_id


def test_configurable_reaches_the_nodes(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "configured"))

    out = client.runs.wait(None, "configured", input=HI, config={"configurable": {"user": "ann"}})
    # a config key the engine does not read is dropped, as unknown request fields are
    config = {"configurable": {"user": "bo"}, "max_concurrency": 2}
    with_context = client.runs.wait(
        None, "configured", input=HI, config=config, context={"team": "blue"}
    )

    assert out["messages"][-1]["content"] == "hello ann"
    assert with_context["messages"][-1]["content"] == "hello bo of team blue"


def test_a_background_run_outlives_its_client(serve: Serve, connect: Connect) -> None:
    server = serve(None, "slow")
    client = connect(server)
    thread_id = client.threads.create()["thread_id"]
    with httpx.Client(base_url=server.url) as short_lived:
        with short_lived.stream(
            "POST", f"/threads/{thread_id}/runs/stream",
            json={"assistant_id": "slow", "input": {"delay": 0.3}},
        ) as response:  # fmt: skip
            first = next(response.iter_lines())
    time.sleep(0.1)

    (run,) = client.runs.list(thread_id)
    joined = client.runs.join(thread_id, run["run_id"])

    assert first == "event: metadata"
    assert joined["steps"] == ["one", "two"]
    assert client.runs.get(thread_id, run["run_id"])["status"] == "success"


def test_after_seconds_delays_the_start(serve: Serve, connect: Connect) -> None:
    client = connect(serve(None, "slow"))
    thread_id = client.threads.create()["thread_id"]

    started = time.monotonic()
    run = client.runs.create(thread_id, "slow", input={"delay": 0}, after_seconds=1)
    waiting = client.runs.get(thread_id, run["run_id"])["status"]
    client.runs.join(thread_id, run["run_id"])

    assert waiting == "pending"
    assert time.monotonic() - started >= 1.0
    assert client.runs.get(thread_id, run["run_id"])["status"] == "success"


def test_webhook_hears_of_the_finished_run(serve: Serve, connect: Connect) -> None:
    hook = LoopbackServer().start()
    hook.replies = [Reply.json({"ok": True})]
    try:
        client = connect(serve(None, "agent"))
        thread_id = client.threads.create()["thread_id"]

        client.runs.wait(thread_id, "agent", input=HI, webhook=f"{hook.url}/done")
        for _ in range(50):
            if hook.requests:
                break
            time.sleep(0.05)
    finally:
        hook.stop()

    (call,) = hook.requests
    assert (call.method, call.path) == ("POST", "/done")
    assert call.json["thread_id"] == thread_id and call.json["status"] == "success"
    assert call.json["values"]["__interrupt__"][0]["value"] == {"question": "Approve?"}
