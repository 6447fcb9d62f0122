"""Run ids make at-least-once delivery exact: a run delivered again never applies its input twice.

In one process, on every store: the same run given again (right after,
after another run moved the thread on, or as an interrupt's answer) leaves
the thread as one delivery would. Also how workers find their graph and
store, and the errors when they cannot.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from flowgraph import END, START, Command, MessagesState, StateGraph, interrupt
from flowgraph.checkpoint import open_checkpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.graph import CompiledGraph
from flowgraph.integrations.celery import load_graph, run_thread

from ._graph import STEPS, builder, check_thread, start_input
from .conftest import BACKENDS, Prefix

GRAPH = "scale._graph:builder"


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, stores: Callable[[str], str]) -> str:
    return stores(request.param)


def test_the_same_run_twice_applies_its_input_once(
    store_url: str, prefix: Prefix, graphs: Callable[[str], CompiledGraph]
) -> None:
    app = graphs(store_url)
    thread = prefix("t")
    first = run_thread(app, thread, start_input(thread), run_id="run-1")
    again = run_thread(app, thread, start_input(thread), run_id="run-1")
    assert again == first
    assert first["step"] == STEPS and first["next"] == [] and first["run_id"] == "run-1"
    check_thread(app, thread, "run-1")


def test_the_engine_alone_resumes_a_run_it_finds_at_the_head(
    store_url: str, prefix: Prefix, graphs: Callable[[str], CompiledGraph]
) -> None:
    """No history search: invoke(run_id=...) itself sees its run at the thread's head."""
    app = graphs(store_url)
    thread = prefix("t")
    app.invoke(start_input(thread), thread_id=thread, run_id="run-1")
    app.invoke(start_input(thread), thread_id=thread, run_id="run-1")
    check_thread(app, thread, "run-1")
    other = app.invoke(start_input(thread), thread_id=thread, run_id="run-2")
    assert other.log[-1] == f"step {STEPS + 1}"  # another run id is a new input


def test_a_late_duplicate_after_another_run_is_not_applied(
    store_url: str, prefix: Prefix, graphs: Callable[[str], CompiledGraph]
) -> None:
    app = graphs(store_url)
    thread = prefix("t")
    run_thread(app, thread, start_input(thread), run_id="run-1")
    later = {"messages": [{"role": "user", "content": "and then?"}]}
    run_thread(app, thread, later, run_id="run-2")
    before = app.get_state(thread)
    assert before.values.count == STEPS + 1
    report = run_thread(app, thread, start_input(thread), run_id="run-1")
    after = app.get_state(thread)
    assert report["checkpoint_id"] == before.checkpoint_id == after.checkpoint_id
    assert after.values.log == [f"step {i}" for i in range(1, STEPS + 2)]
    assert [m.text for m in after.values.messages].count(f"start {thread}") == 1


def test_an_interrupt_answer_delivered_twice_is_applied_once(
    store_url: str, prefix: Prefix, request: pytest.FixtureRequest
) -> None:
    def ask(state: _Asked) -> dict[str, Any]:
        return {"answers": [interrupt("approve?")]}

    graph = StateGraph(_Asked)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    store = open_checkpointer(store_url)
    app = graph.compile(checkpointer=store)
    thread = prefix("t")
    request.addfinalizer(store.close)
    paused = run_thread(app, thread, {"messages": [("user", "go")]}, run_id="run-1")
    assert paused["next"] == ["ask"] and paused["interrupts"][0]["value"] == "approve?"
    done = run_thread(app, thread, run_id="run-2", resume="yes")
    assert done["next"] == [] and done["interrupts"] == []
    assert run_thread(app, thread, run_id="run-2", resume="yes") == done
    assert app.get_state(thread).values.answers == ["yes"]
    # a direct invoke with the run id does the same: nothing left to answer, nothing done
    app.invoke(Command(resume="no"), thread_id=thread, run_id="run-2")
    assert app.get_state(thread).values.answers == ["yes"]


class _Asked(MessagesState):
    answers: list[str] = Field(default_factory=list)


# -- how a worker finds its graph and store -----------------------------------------


def build_with(checkpointer: Any) -> Any:
    return builder.compile(checkpointer=checkpointer)


def test_a_factory_gets_the_store_a_url_names(tmp_path: Path) -> None:
    app = load_graph(f"{__name__}:build_with", f"sqlite:///{tmp_path / 'a.db'}")
    assert isinstance(app.checkpointer, SQLiteCheckpointer)
    assert app.checkpointer.path == str(tmp_path / "a.db")
    out = run_thread(app, "t", start_input("t"), run_id="r")
    assert out["step"] == STEPS


def test_the_store_url_defaults_to_flowgraph_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLOWGRAPH_DB", str(tmp_path / "env.db"))
    app = load_graph(GRAPH)
    run_thread(app, "t", start_input("t"), run_id="r")
    assert SQLiteCheckpointer(tmp_path / "env.db").threads() == ["t"]


def test_errors_say_what_to_give(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLOWGRAPH_DB", raising=False)
    with pytest.raises(ValueError, match=r"store=\.\.\.\) or set \$FLOWGRAPH_DB"):
        load_graph(GRAPH)
    with pytest.raises(ValueError, match="has no attribute 'nope'"):
        load_graph("scale._graph:nope", "x.db")
    with pytest.raises(ValueError, match=r"must be 'package\.module:attribute'"):
        load_graph("scale._graph", "x.db")
    with pytest.raises(ValueError, match=r"No checkpointer for memory://"):
        open_checkpointer("memory://")
    compiled = builder.compile()
    with pytest.raises(ValueError, match="already compiled"):
        load_graph(compiled, "x.db")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a compiled app with a checkpointer"):
        load_graph(lambda: compiled)  # a factory of no arguments must attach a store
    with pytest.raises(TypeError, match="resumee"):
        run_thread(compiled, "t", run_id="r", resumee=1)
    with pytest.raises(ValueError, match="needs an app with a checkpointer"):
        run_thread(compiled, "t", start_input("t"), run_id="r")


def test_the_task_acknowledges_late_and_enqueue_names_the_run() -> None:
    """Through a queue of its own: kombu's memory:// broker is one per process, and other
    code in it (the README's Celery snippet) leaves its messages on the default queue."""
    from celery import Celery

    from flowgraph.integrations.celery import enqueue_run, make_thread_task

    app = Celery("settings", broker="memory://")
    name = f"run-ids-{uuid.uuid4().hex[:10]}"
    try:
        task = make_thread_task(app, GRAPH, store="unused.db", name="t.run", max_retries=7)
        assert (task.name, task.acks_late, task.reject_on_worker_lost) == ("t.run", True, True)
        assert task.max_retries == 7 and app.conf.worker_prefetch_multiplier == 1
        sent = enqueue_run(
            task, "thread-1", {"messages": []}, run_id="run-9", resume="yes", queue=name
        )
        assert sent.id == "run-9"
        with app.connection_for_read() as conn, conn.SimpleQueue(name) as queue:
            message = queue.get(timeout=10)
            kwargs = message.payload[1]
            message.ack()
        assert kwargs["thread_id"] == "thread-1" and kwargs["run_id"] == "run-9"
        assert kwargs["input"] == {"messages": []} and kwargs["resume"] == "yes"
        assert isinstance(kwargs["enqueued_at"], float)
    finally:
        app.close()
