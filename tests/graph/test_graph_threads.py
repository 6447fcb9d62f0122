"""Sync nodes off the event loop: the worker pool, and the sync API's hand-stepped runs.

Real threads and a real forked process; no timing: overlap is proven by a
barrier that only opens when all parties wait at once.
"""

from __future__ import annotations

import asyncio
import operator
import os
import threading
from typing import Annotated, Any, TypedDict

import pytest

from flowgraph import END, START, RetryPolicy, Send, StateGraph
from flowgraph._context import current_task, message_id_factory


class Fan(TypedDict, total=False):
    n: int
    items: Annotated[list[int], operator.add]
    threads: Annotated[list[int], operator.add]


def fan_app(worker: Any) -> Any:
    g = StateGraph(Fan)
    g.add_node("split", lambda s: None)
    g.add_node("worker", worker)
    g.add_edge(START, "split")
    g.add_conditional_edges("split", lambda s: [Send("worker", i) for i in range(s["n"])])
    g.add_edge("worker", END)
    return g.compile()


@pytest.mark.parametrize("api", ["invoke", "ainvoke"])
def test_blocking_sync_nodes_of_one_step_run_at_the_same_time(api: str) -> None:
    parties = 4
    barrier = threading.Barrier(parties, timeout=30)

    def worker(i: int) -> dict[str, Any]:
        barrier.wait()  # opens only if all four are running at once
        return {"items": [i], "threads": [threading.get_ident()]}

    app = fan_app(worker)
    if api == "invoke":
        out = app.invoke({"n": parties})
    else:
        out = asyncio.run(app.ainvoke({"n": parties}))
    assert out["items"] == [0, 1, 2, 3]  # merged in task order, not finish order
    assert len(set(out["threads"])) == parties
    assert threading.get_ident() not in out["threads"]


def test_many_sync_sends_keep_their_order_and_context() -> None:
    def worker(i: int) -> dict[str, Any]:
        scope = current_task.get()
        assert scope is not None and scope.node == "worker"
        return {"items": [i * 2 + (scope.task_index == i)]}  # each task sees its own scope

    out = fan_app(worker).invoke({"n": 300})
    assert out["items"] == [i * 2 + 1 for i in range(300)]


def test_an_error_in_a_pooled_node_reaches_the_caller_with_its_type() -> None:
    def worker(i: int) -> dict[str, Any]:
        if i == 7:
            raise KeyError(f"item {i}")
        return {"items": [i]}

    with pytest.raises(KeyError, match="item 7") as info:
        fan_app(worker).invoke({"n": 20})
    assert "in node 'worker'" in "".join(getattr(info.value, "__notes__", []))


def test_a_sync_run_leaves_no_context_behind() -> None:
    """invoke steps its run by hand in a copy of the caller's context, as a Task would."""
    calls: list[int] = []

    def flaky(state: Fan) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("once")  # the retry's sleep waits on the event loop
        return {"items": [len(calls)]}

    g = StateGraph(Fan)
    g.add_node("flaky", flaky, retry=RetryPolicy(initial_interval=0.001, jitter=False))
    g.add_node("other", lambda s: {"items": [0]})
    g.add_edge(START, "flaky")
    g.add_edge(START, "other")
    g.add_edge("flaky", END)
    g.add_edge("other", END)
    out = g.compile().invoke({"n": 0})
    assert out["items"] == [2, 0]
    assert current_task.get() is None
    assert message_id_factory.get() is None
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()  # the loop is not left marked as running


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_a_forked_child_runs_sync_nodes_in_threads_of_its_own() -> None:
    def worker(i: int) -> dict[str, Any]:
        return {"items": [i]}

    app = fan_app(worker)
    assert app.invoke({"n": 8})["items"] == list(range(8))  # the parent's pool has threads now
    pid = os.fork()
    if pid == 0:  # the child: its pool must start threads of its own, or this hangs
        code = 1
        try:
            timer = threading.Timer(30, lambda: os._exit(3))
            timer.daemon = True
            timer.start()
            code = 0 if app.invoke({"n": 8})["items"] == list(range(8)) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_event_loops_that_ran_sync_nodes_can_be_collected() -> None:
    import gc
    import weakref

    app = fan_app(lambda i: {"items": [i]})
    loop = asyncio.new_event_loop()
    assert loop.run_until_complete(app.ainvoke({"n": 3}))["items"] == [0, 1, 2]
    loop.close()
    gone = weakref.ref(loop)
    del loop
    gc.collect()
    assert gone() is None
