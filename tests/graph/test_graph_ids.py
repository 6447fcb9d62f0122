"""Deterministic message ids inside a run (DESIGN §2, issue 3 item 5).

Ids derive from the thread and the checkpoint a step continues from (plus
step, task and position), so re-running a step from the same checkpoint —
a retry, a resume, a fork — re-emits the same ids and merging by id stays
idempotent; a run with no thread to continue gets ids no other run has.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Annotated, Any

import pytest
from pydantic import Field

from flowgraph import (
    END,
    START,
    AIMessage,
    AnyMessage,
    HumanMessage,
    MessagesState,
    RetryPolicy,
    StateGraph,
    add_messages,
)
from flowgraph._ids import StepIds, scope_key

try:  # the public path of DESIGN §6, once the package re-exports it
    from flowgraph.checkpoint import MemoryCheckpointer  # type: ignore[attr-defined]
except ImportError:
    from flowgraph.checkpoint.memory import MemoryCheckpointer

FAST = RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False)


def ids(state: Any) -> list[str]:
    return [m.id for m in state.messages]


def chat_graph(failures: dict[str, int] | None = None, checkpointer: Any = None) -> Any:
    """START -> first (two messages) -> second (one message, flaky if asked) -> END."""
    failures = failures if failures is not None else {}

    def first(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("first 1"), AIMessage("first 2")]}

    def second(state: MessagesState) -> dict[str, Any]:
        if failures.get("second", 0) > 0:
            failures["second"] -= 1
            raise ConnectionError("flaky network")
        return {"messages": [AIMessage("second")]}

    g = StateGraph(MessagesState)
    g.add_node("first", first)
    g.add_node("second", second, retry=FAST)
    g.add_edge(START, "first").add_edge("first", "second").add_edge("second", END)
    return g.compile(checkpointer=checkpointer)


def checkpoint_at(app: Any, thread_id: str, step: int) -> str:
    (snapshot,) = [s for s in app.get_state_history(thread_id) if s.step == step]
    return str(snapshot.checkpoint_id)


# ------------------------------------------------------------------ every run


def test_every_message_gets_an_id_and_ids_are_unique() -> None:
    out = chat_graph().invoke({"messages": [HumanMessage("hi"), ("human", "there")]})
    assert [m.text for m in out.messages] == ["hi", "there", "first 1", "first 2", "second"]
    assert all(isinstance(i, str) and i for i in ids(out))
    assert len(set(ids(out))) == 5


def test_given_ids_are_kept() -> None:
    out = chat_graph().invoke({"messages": [HumanMessage("hi", id="mine")]})
    assert ids(out)[0] == "mine"


def test_runs_without_a_thread_to_continue_never_share_ids() -> None:
    app = chat_graph()
    first, second = app.invoke({"messages": ["hi"]}), app.invoke({"messages": ["hi"]})
    assert not set(ids(first)) & set(ids(second))


def test_updates_stream_shows_the_ids_the_state_holds() -> None:
    parts = list(chat_graph().stream({"messages": ["hi"]}, mode=["updates", "values"]))
    streamed = [m.id for p in parts if p.mode == "updates" for m in p.data["messages"]]
    final = next(p.data for p in reversed(parts) if p.mode == "values")
    assert len(streamed) == 3
    assert streamed == ids(final)[1:]


# ------------------------------------------------------------------ threads


def test_same_thread_and_checkpoint_give_identical_ids() -> None:
    app = chat_graph(checkpointer=MemoryCheckpointer())
    original = app.invoke({"messages": ["hi"]}, thread_id="t")
    start = checkpoint_at(app, "t", 0)
    replays = [app.invoke(None, thread_id="t", checkpoint_id=start) for _ in range(2)]
    for replay in replays:
        assert [m.text for m in replay.messages] == ["hi", "first 1", "first 2", "second"]
        # the input and the step re-run from the same checkpoint keep their ids
        assert ids(replay)[:3] == ids(original)[:3]


def test_a_new_thread_on_a_fresh_store_starts_with_the_same_input_ids() -> None:
    a = chat_graph(checkpointer=MemoryCheckpointer()).invoke({"messages": ["hi"]}, thread_id="t")
    b = chat_graph(checkpointer=MemoryCheckpointer()).invoke({"messages": ["hi"]}, thread_id="t")
    assert ids(a)[0] == ids(b)[0]


def test_different_threads_get_different_ids() -> None:
    app = chat_graph(checkpointer=MemoryCheckpointer())
    a = app.invoke({"messages": ["hi"]}, thread_id="t1")
    b = app.invoke({"messages": ["hi"]}, thread_id="t2")
    assert [m.text for m in a.messages] == [m.text for m in b.messages]
    assert not set(ids(a)) & set(ids(b))


def test_second_turn_on_a_thread_gets_new_ids() -> None:
    app = chat_graph(checkpointer=MemoryCheckpointer())
    app.invoke({"messages": ["one"]}, thread_id="t")
    out = app.invoke({"messages": ["two"]}, thread_id="t")
    assert [m.text for m in out.messages][-4:] == ["two", "first 1", "first 2", "second"]
    assert len(set(ids(out))) == 8


# ------------------------------------------------------------------ retries and resumes


def test_retried_node_emits_the_ids_of_an_unretried_run() -> None:
    failures: dict[str, int] = {}
    app = chat_graph(failures, checkpointer=MemoryCheckpointer())
    clean = app.invoke({"messages": ["hi"]}, thread_id="t")
    after_first = checkpoint_at(app, "t", 1)
    failures["second"] = 2  # two failed attempts, the third succeeds
    retried = app.invoke(None, thread_id="t", checkpoint_id=after_first)
    assert failures["second"] == 0
    assert ids(retried) == ids(clean)
    assert [m.text for m in retried.messages] == ["hi", "first 1", "first 2", "second"]


def test_retry_inside_a_run_leaves_no_duplicate_messages() -> None:
    failures = {"second": 2}
    out = chat_graph(failures).invoke({"messages": ["hi"]})
    assert [m.text for m in out.messages] == ["hi", "first 1", "first 2", "second"]
    assert len(set(ids(out))) == 4


def test_resumed_step_after_a_crash_emits_the_ids_of_a_clean_run() -> None:
    failures = {"second": 99}  # fails past its retries: the run stops after step 1
    app = chat_graph(failures, checkpointer=MemoryCheckpointer())
    try:
        app.invoke({"messages": ["hi"]}, thread_id="t")
    except ConnectionError:
        pass
    else:  # pragma: no cover - the assertion explains
        raise AssertionError("the flaky node should have failed the run")
    failures["second"] = 0
    resumed = app.invoke(None, thread_id="t")
    replay = app.invoke(None, thread_id="t", checkpoint_id=checkpoint_at(app, "t", 1))
    assert [m.text for m in resumed.messages] == ["hi", "first 1", "first 2", "second"]
    assert ids(resumed) == ids(replay)


def test_parallel_steps_give_the_same_ids_whatever_order_tasks_finish_in() -> None:
    def node(name: str) -> Any:
        async def run(state: MessagesState) -> dict[str, Any]:
            await asyncio.sleep(random.random() * 0.003)
            return {"messages": [AIMessage(f"{name} 1"), AIMessage(f"{name} 2")]}

        return run

    g = StateGraph(MessagesState)
    for name in ("a", "b", "c"):
        g.add_node(name, node(name))
        g.add_edge(START, name)
        g.add_edge(name, END)
    app = g.compile(checkpointer=MemoryCheckpointer())

    async def main() -> list[list[str]]:
        first = await app.ainvoke({"messages": ["hi"]}, thread_id="t")
        start = checkpoint_at(app, "t", 0)
        runs = [first]
        for _ in range(8):
            runs.append(await app.ainvoke(None, thread_id="t", checkpoint_id=start))
        return [ids(r) for r in runs]

    seen = asyncio.run(main())
    assert all(r == seen[0] for r in seen)
    assert len(set(seen[0])) == 7


# ------------------------------------------------------------------ ids made at the barrier


def my_messages(left: list[Any], right: list[Any]) -> list[Any]:
    """A user's own message reducer: add_messages under another name, so the engine does
    not give the writes ids up front; the ids are made while merging, at the barrier."""
    return add_messages(left, right)


class Logged(MessagesState):
    log: Annotated[list[AnyMessage], my_messages] = Field(default_factory=list)


def barrier_graph(failures: dict[str, int]) -> Any:
    """START -> a and b in parallel, each writing two id-less messages to `log` -> END."""

    def writer(name: str) -> Any:
        def node(state: Logged) -> dict[str, Any]:
            if failures.get(name, 0) > 0:
                failures[name] -= 1
                raise ConnectionError("flaky network")
            return {"log": [AIMessage(f"{name} 1"), AIMessage(f"{name} 2")]}

        return node

    g = StateGraph(Logged)
    for name in ("a", "b"):
        g.add_node(name, writer(name), retry=FAST)
        g.add_edge(START, name)
        g.add_edge(name, END)
    return g.compile(checkpointer=MemoryCheckpointer())


def log_ids(state: Any) -> list[str]:
    return [m.id for m in state.log]


def test_a_custom_reducer_s_ids_for_two_parallel_writers_never_collide() -> None:
    out = barrier_graph({}).invoke({"log": []}, thread_id="t")
    assert [m.text for m in out.log] == ["a 1", "a 2", "b 1", "b 2"]
    assert len(set(log_ids(out))) == 4


def test_a_custom_reducer_s_ids_are_the_same_on_retry_and_resume() -> None:
    failures = {"b": 1}  # b's first attempt fails, its retry succeeds
    app = barrier_graph(failures)
    retried = app.invoke({"log": []}, thread_id="t")
    assert failures["b"] == 0
    replay = app.invoke(None, thread_id="t", checkpoint_id=checkpoint_at(app, "t", 0))
    assert log_ids(retried) == log_ids(replay)

    failures["b"] = 99  # past its retries: the step stops, a's writes kept as pending
    with pytest.raises(ConnectionError):
        app.invoke({"log": []}, thread_id="r")
    failures["b"] = 0
    resumed = app.invoke(None, thread_id="r")
    replay = app.invoke(None, thread_id="r", checkpoint_id=checkpoint_at(app, "r", 0))
    assert [m.text for m in resumed.log] == ["a 1", "a 2", "b 1", "b 2"]
    assert log_ids(resumed) == log_ids(replay)
    assert len(set(log_ids(resumed))) == 4
    assert not set(log_ids(resumed)) & set(log_ids(retried))  # another thread, other ids


# ------------------------------------------------------------------ after a run


def test_no_id_factory_outlives_ainvoke_in_the_caller_s_context() -> None:
    """ainvoke runs in the caller's task: every id factory it installs (for the input, a
    lone node, a parallel step, a custom reducer at the barrier) must be gone after."""

    def one(state: Logged) -> dict[str, Any]:
        return {"messages": [AIMessage("one")], "log": [AIMessage("log")]}

    async def two(state: Logged) -> dict[str, Any]:
        return {"messages": [AIMessage("two")], "log": [AIMessage("log")]}

    g = StateGraph(Logged)
    g.add_node("one", one)
    g.add_node("two", two)
    g.add_node("three", one)
    g.add_edge(START, "one").add_edge("one", "two").add_edge("one", "three")
    g.add_edge("two", END).add_edge("three", END)

    async def main() -> list[str]:
        fresh = []
        for app, thread_id in ((g.compile(), None), (g.compile(MemoryCheckpointer()), "t")):
            out = await app.ainvoke({"messages": ["hi"]}, thread_id=thread_id)
            assert len(out.messages) == 4 and len(out.log) == 3
            fresh += [m.id for m in add_messages([], [HumanMessage("a"), HumanMessage("b")])]
        return fresh

    fresh = asyncio.run(main())
    assert [uuid.UUID(i).version for i in fresh] == [4, 4, 4, 4]
    assert len(set(fresh)) == 4


# ------------------------------------------------------------------ golden ids


def test_golden_ids() -> None:
    """The exact ids a fixed (thread, parent checkpoint, step, task, position) produces.

    Ids are part of the stored format: a thread resumed after an upgrade re-runs its
    step under the new version, and if the derivation changed it would re-emit its
    messages under new ids (duplicates next to the stored ones). A change that makes
    this test fail must be deliberate, and ship with a migration note in the release
    notes and README ("Checkpoints and resume"); update the values here only then.
    """
    # the key of a step: the thread and the checkpoint it continues from
    assert scope_key("golden", None) == "07e258d27ac6dde9"
    assert scope_key("golden-thread", "18ed2a1904bf127ed28900018d7cbde1") == "85d13343c35858e0"
    step_ids = StepIds("85d13343c35858e0", 3, 2)  # step 3, the step's task 2
    assert [step_ids(), step_ids()] == ["85d13343c35858e0-3-2-0", "85d13343c35858e0-3-2-1"]
    step_ids.start(0)
    assert step_ids() == "85d13343c35858e0-3-0-0"

    # a new thread's input (step 0, no checkpoint before it) through the public API
    app = chat_graph(checkpointer=MemoryCheckpointer())
    out = app.invoke({"messages": [HumanMessage("hi"), ("user", "there")]}, thread_id="golden")
    assert ids(out)[:2] == ["07e258d27ac6dde9-0-0-0", "07e258d27ac6dde9-0-0-1"]
    # a node's messages: the key of the checkpoint its step continues from
    history = {s.step: s for s in app.get_state_history("golden")}
    for step, texts in ((1, ["first 1", "first 2"]), (2, ["second"])):
        made = StepIds(scope_key("golden", history[step].parent_id), step, 0)
        expected = [made() for _ in texts]
        assert [m.id for m in out.messages if m.text in texts] == expected
