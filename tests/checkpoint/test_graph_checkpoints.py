"""Checkpoints as a graph's user sees them, on every backend of the conformance suite.

History, resume, fork, update_state, human in the loop, pending writes,
the transcript invariant, write-time serialization, one writer per
thread, deterministic ids, and storage that grows with what changed.
Values are compared with what the live run streamed, message for message.
"""

from __future__ import annotations

import asyncio
import contextlib
import operator
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pytest

from flowgraph import (
    END,
    START,
    AIMessage,
    Command,
    HumanMessage,
    MessagesState,
    RemoveMessage,
    Send,
    StateGraph,
    ToolCall,
    ToolMessage,
    interrupt,
)
from flowgraph.checkpoint import serde
from flowgraph.checkpoint.base import BaseCheckpointer, CheckpointRecord
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.errors import ConcurrentRunError, InvalidUpdateError, SerializationError

from .conftest import Backend, close_quietly

Tid = Callable[[str], str]


class State(MessagesState):
    notes: Annotated[list[str], operator.add] = []  # noqa: RUF012 - pydantic copies defaults
    count: int = 0


def fields(state: Any) -> dict[str, Any]:
    """A state's values as plain data (messages compared as messages, with their ids)."""
    return {name: list(v) if isinstance(v, list) else v for name, v in dict(state).items()}


def texts(state: Any) -> list[str]:
    return [m.text for m in state.messages]


def appender(name: str, calls: dict[str, int] | None = None) -> Any:
    """A node that appends one AI message and one note, and counts its runs."""

    def node(state: State) -> dict[str, Any]:
        if calls is not None:
            calls[name] = calls.get(name, 0) + 1
        return {"messages": [AIMessage(f"{name}{len(state.messages)}")], "notes": [name]}

    return node


def diamond(store: BaseCheckpointer, **compile_args: Any) -> Any:
    """START -> a -> b -> (c | d in parallel) -> e -> END."""
    g = StateGraph(State)
    for name in "abcde":
        g.add_node(name, appender(name))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("b", "d")
    g.add_edge(["c", "d"], "e")
    g.add_edge("e", END)
    return g.compile(checkpointer=store, **compile_args)


FIRST_TURN = ["hi", "a1", "b2", "c3", "d3", "e5"]
"""What `diamond` makes of "hi": the parallel c and d see the same three messages."""


def live_values(app: Any, input: Any, **kwargs: Any) -> dict[int, dict[str, Any]]:
    """step -> the values the run streamed after that step."""
    return {part.step: fields(part.data) for part in app.stream(input, mode="values", **kwargs)}


def assert_linear_history(app: Any, thread_id: str, *, before_inputs: bool = True) -> list[Any]:
    history = list(app.get_state_history(thread_id, before_inputs=before_inputs))
    assert [h.parent_id for h in history] == [h.checkpoint_id for h in history[1:]] + [None]
    return history


# -- a checkpoint after every step ---------------------------------------------------------


def test_every_step_is_a_checkpoint_that_rebuilds_the_live_values(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    app = diamond(checkpointer)
    live = live_values(app, {"messages": [HumanMessage("hi")]}, thread_id=t)
    live |= live_values(app, {"messages": [HumanMessage("more")], "count": 7}, thread_id=t)
    assert sorted(live) == list(range(10))
    live[-1] = fields(State())  # before the first input: the empty state

    history = assert_linear_history(app, t)
    # 2 x (the checkpoint before the input, the input, 4 steps); the checkpoint before
    # the second input is the first turn's end again, waiting to run __start__
    assert len(history) == 12
    assert [h.step for h in history] == [9, 8, 7, 6, 5, 4, 4, 3, 2, 1, 0, -1]
    oldest_first = list(reversed(history))
    turn = ["input", "input", "loop", "loop", "loop", "loop"]
    assert [h.metadata["source"] for h in oldest_first] == turn + turn
    assert [h.metadata.get("nodes") for h in oldest_first[:6]] == [
        None,
        ["__start__"],
        ["a"],
        ["b"],
        ["c", "d"],
        ["e"],
    ]
    assert [h.next for h in oldest_first[:6]] == [
        ("__start__",), ("a",), ("b",), ("c", "d"), ("e",), ()
    ]  # fmt: skip
    assert oldest_first[6].next == ("__start__",)
    assert len({h.metadata["run_id"] for h in history}) == 2
    assert [h.created_at for h in oldest_first] == sorted(h.created_at for h in history)
    for snapshot in history:
        assert fields(snapshot.values) == live[snapshot.step], snapshot.step
        again = app.get_state(t, checkpoint_id=snapshot.checkpoint_id)
        assert fields(again.values) == live[snapshot.step]
        assert again.next == snapshot.next
    assert list(app.get_state_history(t, limit=3)) == history[:3]
    before = list(app.get_state_history(t, before=history[2].checkpoint_id, limit=4))
    assert before == history[3:7]
    final = app.get_state(t)
    assert final.checkpoint_id == history[0].checkpoint_id
    assert texts(final.values) == [*FIRST_TURN, "more", "a7", "b8", "c9", "d9", "e11"]
    assert final.values.notes == list("abcde") * 2
    assert final.values.count == 7


def test_a_long_run_rebuilds_every_checkpoint_through_deltas_and_snapshots(
    backend: Backend, checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    """40 steps of a loop that appends, replaces in place and removes messages."""
    t = tid("t")

    def step(state: State) -> dict[str, Any]:
        n = state.count
        update: list[Any] = [AIMessage(f"turn {n} " + "x" * (n % 7) * 40, id=f"m{n}")]
        if n % 5 == 4:
            update.append(AIMessage(f"status after {n}", id="status"))  # replaced in place
        if n % 9 == 8:
            update.append(RemoveMessage(id=f"m{n - 3}"))
        return {"messages": update, "notes": [f"n{n}"], "count": n + 1}

    g = StateGraph(State)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s.count < 40 else END, ["step", END])
    app = g.compile(checkpointer=checkpointer)
    live = live_values(app, {"messages": [HumanMessage("go")]}, thread_id=t)
    history = assert_linear_history(app, t, before_inputs=False)  # the stored steps
    assert len(history) == 41
    for snapshot in history:
        assert fields(snapshot.values) == live[snapshot.step], snapshot.step
    # a second reader (another process, for a shared store) rebuilds the same states
    if backend.shared_store:
        other_store = backend.make()
        try:
            other = g.compile(checkpointer=other_store)
            for snapshot in history[::7]:
                fresh = other.get_state(t, checkpoint_id=snapshot.checkpoint_id)
                assert fields(fresh.values) == live[snapshot.step]
        finally:
            close_quietly(other_store)
    # pruned to the last 5, those still rebuild exactly
    removed = app.prune(t, keep_last=5)
    kept = list(app.get_state_history(t, before_inputs=False))
    assert removed == len(history) - len(kept)
    assert len(kept) >= 5
    for snapshot in kept:
        assert fields(snapshot.values) == live[snapshot.step]
    out = app.invoke({"messages": [HumanMessage("after prune")], "count": 40}, thread_id=t)
    assert texts(out)[-2:] == ["after prune", "turn 40 " + "x" * 200]


# -- continuing, finishing, forking --------------------------------------------------------


def test_new_input_continues_the_thread_and_none_on_a_finished_thread_is_a_no_op(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    app = diamond(checkpointer)
    app.invoke({"messages": [HumanMessage("one")]}, thread_id=t)
    out = app.invoke({"messages": [HumanMessage("two")]}, thread_id=t)
    assert texts(out) == ["one", *FIRST_TURN[1:], "two", "a7", "b8", "c9", "d9", "e11"]
    ids = [m.id for m in out.messages]
    assert len(set(ids)) == len(ids)
    before = list(app.get_state_history(t))
    again = app.invoke(None, thread_id=t)
    assert fields(again) == fields(out)
    assert list(app.get_state_history(t)) == before
    assert app.get_state(tid("nobody")).checkpoint_id is None
    assert list(app.get_state_history(tid("nobody"))) == []
    other = app.invoke({"messages": [HumanMessage("one")]}, thread_id=tid("other"))
    assert texts(other) == texts(out)[:6]
    assert set(m.id for m in other.messages).isdisjoint(ids)


def test_forking_from_an_older_checkpoint_starts_a_branch_and_keeps_both(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    app = diamond(checkpointer)
    app.invoke({"messages": [HumanMessage("one")]}, thread_id=t)
    main = app.invoke({"messages": [HumanMessage("two")]}, thread_id=t)
    old = list(app.get_state_history(t))
    # the first turn's end (not the checkpoint before the second input, also step 4)
    end_of_first = next(h for h in old if h.step == 4 and h.next == ())
    after_b = next(h for h in old if h.step == 2)

    fork = app.invoke(
        {"messages": [HumanMessage("alt")]}, thread_id=t, checkpoint_id=end_of_first.checkpoint_id
    )
    assert texts(fork) == ["one", *FIRST_TURN[1:], "alt", "a7", "b8", "c9", "d9", "e11"]
    history = list(app.get_state_history(t))
    assert len(history) == len(old) + 6  # the checkpoint before "alt", its input and 4 steps
    head = app.get_state(t)
    assert fields(head.values) == fields(fork)
    assert head.checkpoint_id == history[0].checkpoint_id
    branch = [h for h in history if h.checkpoint_id not in {o.checkpoint_id for o in old}]
    assert (branch[-1].next, branch[-1].values) == ((START,), end_of_first.values)
    assert branch[-1].parent_id == end_of_first.checkpoint_id
    # the old branch still reads exactly as it was
    for snapshot in old:
        assert fields(app.get_state(t, snapshot.checkpoint_id).values) == fields(snapshot.values)
    assert fields(app.get_state(t, old[0].checkpoint_id).values) == fields(main)

    # forking with None re-runs the steps after that checkpoint
    replay = app.invoke(None, thread_id=t, checkpoint_id=after_b.checkpoint_id)
    assert texts(replay) == ["one", *FIRST_TURN[1:]]
    assert fields(app.get_state(t).values) == fields(replay)
    assert len(list(app.get_state_history(t))) == len(history) + 2

    with pytest.raises(InvalidUpdateError, match="no checkpoint"):
        app.invoke(None, thread_id=t, checkpoint_id="not-a-checkpoint")


def test_a_forked_branch_says_so_in_its_metadata(checkpointer: BaseCheckpointer, tid: Tid) -> None:
    """StateSnapshot.metadata documents source input / loop / update / fork."""
    t = tid("t")
    app = diamond(checkpointer)
    app.invoke({"messages": [HumanMessage("one")]}, thread_id=t)
    *_, first_input, before_it = app.get_state_history(t)
    assert (first_input.step, before_it.step, before_it.next) == (0, -1, (START,))
    app.invoke(None, thread_id=t, checkpoint_id=first_input.checkpoint_id)
    branch_start = next(
        h for h in app.get_state_history(t) if h.parent_id == first_input.checkpoint_id
        and h.metadata["run_id"] != first_input.metadata["run_id"]
    )  # fmt: skip
    assert branch_start.metadata["source"] == "fork"


# -- update_state --------------------------------------------------------------------------


def test_update_state_goes_through_the_reducers(checkpointer: BaseCheckpointer, tid: Tid) -> None:
    t = tid("t")
    app = diamond(checkpointer, interrupt_after=["a"])
    app.invoke({"messages": [HumanMessage("hi", id="h1")]}, thread_id=t)
    paused = app.get_state(t)
    assert paused.next == ("b",)
    checkpoint_id = app.update_state(
        t,
        {
            "messages": [HumanMessage("hi, edited", id="h1"), AIMessage("added")],
            "notes": ["manual"],
            "count": 3,
        },
    )
    state = app.get_state(t)
    assert state.checkpoint_id == checkpoint_id
    assert state.parent_id == paused.checkpoint_id
    assert state.metadata["source"] == "update"
    assert state.step == paused.step + 1
    assert texts(state.values) == ["hi, edited", "a1", "added"]
    assert state.values.messages[2].id is not None
    assert state.values.notes == ["a", "manual"]
    assert state.values.count == 3
    assert state.next == ("b",)  # unchanged without as_node
    out = app.invoke(None, thread_id=t)
    assert texts(out) == ["hi, edited", "a1", "added", "b3", "c4", "d4", "e6"]
    assert out.notes == ["a", "manual", "b", "c", "d", "e"]


def test_update_state_as_a_node_follows_that_nodes_edges(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    calls: dict[str, int] = {}
    g = StateGraph(State)
    g.add_node("ask", appender("ask", calls))
    g.add_node("router", appender("router", calls))
    g.add_node("high", appender("high", calls))
    g.add_node("low", appender("low", calls))
    g.add_edge(START, "ask")
    g.add_edge("ask", "router")
    g.add_conditional_edges("router", lambda s: "high" if s.count > 10 else "low", ["high", "low"])
    g.add_edge("high", END)
    g.add_edge("low", END)
    app = g.compile(checkpointer=checkpointer, interrupt_before=["router"])
    app.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)
    assert app.get_state(t).next == ("router",)
    app.update_state(t, {"count": 50, "notes": ["by hand"]}, as_node="router")
    state = app.get_state(t)
    assert state.next == ("high",)
    assert state.metadata["nodes"] == ["router"]
    out = app.invoke(None, thread_id=t)
    assert out.notes == ["ask", "by hand", "high"]
    assert calls == {"ask": 1, "high": 1}
    with pytest.raises(InvalidUpdateError, match="no such node"):
        app.update_state(t, {"count": 1}, as_node="nope")


def test_update_state_at_a_compile_time_breakpoint_then_continue(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    """The classic edit-then-continue: pause before a node, fix the state, invoke(None)."""
    t = tid("t")
    app = diamond(checkpointer, interrupt_before=["b"])
    app.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)
    assert app.get_state(t).next == ("b",)
    app.update_state(t, {"notes": ["edited"]})
    out = app.invoke(None, thread_id=t)
    assert app.get_state(t).next == ()
    assert texts(out) == FIRST_TURN
    assert out.notes == ["a", "edited", "b", "c", "d", "e"]


# -- human in the loop ---------------------------------------------------------------------


def approval_app(store: BaseCheckpointer, calls: dict[str, int], publish: Any = None) -> Any:
    def review(state: State) -> dict[str, Any]:
        calls["before"] = calls.get("before", 0) + 1
        answer = interrupt({"question": "ship it?", "draft": state.messages[-1].text})
        calls["after"] = calls.get("after", 0) + 1
        return {"messages": [AIMessage(f"answer: {answer}")], "notes": ["reviewed"]}

    g = StateGraph(State)
    g.add_node("draft", appender("draft"))
    g.add_node("review", review)
    g.add_node("publish", publish or appender("publish"))
    g.add_edge(START, "draft")
    g.add_edge("draft", "review")
    g.add_edge("review", "publish")
    g.add_edge("publish", END)
    return g.compile(checkpointer=store)


def test_interrupt_pauses_and_command_resume_answers_it(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    calls: dict[str, int] = {}
    app = approval_app(checkpointer, calls)
    paused = app.invoke({"messages": [HumanMessage("write")]}, thread_id=t)
    assert texts(paused) == ["write", "draft1"]
    state = app.get_state(t)
    assert state.next == ("review",)
    (pause,) = state.interrupts
    assert pause.value == {"question": "ship it?", "draft": "draft1"}
    assert pause.node == "review"
    assert pause.id
    assert calls == {"before": 1}

    with pytest.raises(InvalidUpdateError):
        app.invoke(Command(resume="x"), thread_id=tid("never-started"))
    out = app.invoke(Command(resume="yes"), thread_id=t)
    assert texts(out) == ["write", "draft1", "answer: yes", "publish3"]
    assert calls == {"before": 2, "after": 1}  # code before interrupt() runs again on resume
    assert app.get_state(t).interrupts == ()
    with pytest.raises(InvalidUpdateError, match="not waiting"):
        app.invoke(Command(resume="again"), thread_id=t)


def test_a_failed_step_after_an_answered_interrupt_shows_no_interrupt(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    """The answer was used and its step checkpointed: the failure after it is an ordinary
    stopped step (resume with None), not a question still waiting."""
    t = tid("t")
    calls: dict[str, int] = {}
    broken = {"publish": True}

    def publish(state: State) -> dict[str, Any]:
        if broken["publish"]:
            raise ConnectionError("publishing service down")
        return {"messages": [AIMessage("published")]}

    app = approval_app(checkpointer, calls, publish)
    app.invoke({"messages": [HumanMessage("write")]}, thread_id=t)
    (pause,) = app.get_state(t).interrupts
    with pytest.raises(ConnectionError):
        app.invoke(Command(resume="yes"), thread_id=t)
    stopped = app.get_state(t)
    assert stopped.interrupts == ()
    assert stopped.next == ("publish",)
    assert texts(stopped.values) == ["write", "draft1", "answer: yes"]
    with pytest.raises(InvalidUpdateError, match="not waiting"):
        app.invoke(Command(resume={pause.id: "again"}), thread_id=t)
    broken["publish"] = False
    out = app.invoke(None, thread_id=t)
    assert texts(out) == ["write", "draft1", "answer: yes", "published"]
    assert calls == {"before": 2, "after": 1}
    assert app.get_state(t).interrupts == ()


def test_two_interrupts_in_one_node_are_answered_in_turn(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    calls: list[str] = []

    def form(state: State) -> dict[str, Any]:
        calls.append("start")
        name = interrupt("name?")
        calls.append(f"name={name}")
        age = interrupt("age?")
        calls.append(f"age={age}")
        return {"notes": [f"{name}/{age}"]}

    g = StateGraph(State)
    g.add_node("form", form)
    g.add_edge(START, "form")
    g.add_edge("form", END)
    app = g.compile(checkpointer=checkpointer)
    app.invoke({"notes": []}, thread_id=t)
    (first,) = app.get_state(t).interrupts
    assert first.value == "name?"
    app.invoke(Command(resume="Ada"), thread_id=t)
    (second,) = app.get_state(t).interrupts
    assert second.value == "age?"
    assert second.id != first.id
    out = app.invoke(Command(resume={second.id: 36}), thread_id=t)
    assert out.notes == ["Ada/36"]
    assert calls == ["start", "start", "name=Ada", "start", "name=Ada", "age=36"]


def test_parallel_interrupts_are_resumed_by_id(checkpointer: BaseCheckpointer, tid: Tid) -> None:
    t = tid("t")
    runs: dict[str, int] = {}

    def asker(name: str) -> Any:
        def node(state: State) -> dict[str, Any]:
            runs[name] = runs.get(name, 0) + 1
            return {"notes": [f"{name}={interrupt(f'{name}?')}"]}

        return node

    g = StateGraph(State)
    g.add_node("x", asker("x"))
    g.add_node("y", asker("y"))
    g.add_node("join", appender("join"))
    g.add_edge(START, "x")
    g.add_edge(START, "y")
    g.add_edge(["x", "y"], "join")
    g.add_edge("join", END)
    app = g.compile(checkpointer=checkpointer)
    app.invoke({"notes": []}, thread_id=t)
    state = app.get_state(t)
    assert state.next == ("x", "y")
    by_node = {i.node: i for i in state.interrupts}
    assert {i.value for i in state.interrupts} == {"x?", "y?"}
    assert by_node["x"].id != by_node["y"].id

    with pytest.raises(InvalidUpdateError, match="2 interrupts are waiting"):
        app.invoke(Command(resume="ambiguous"), thread_id=t)
    with pytest.raises(InvalidUpdateError, match="interrupt_id"):
        app.invoke(Command(resume={"no-such-id": 1}), thread_id=t)
    with pytest.raises(InvalidUpdateError):
        app.invoke(Command(resume={by_node["x"].id: 1, "no-such-id": 2}), thread_id=t)
    assert app.get_state(t).checkpoint_id == state.checkpoint_id

    # answer one: the other stays waiting, with the same id
    app.invoke(Command(resume={by_node["y"].id: "yes"}), thread_id=t)
    (left,) = app.get_state(t).interrupts
    assert left.id == by_node["x"].id
    out = app.invoke(Command(resume={left.id: "ok"}), thread_id=t)
    assert out.notes == ["x=ok", "y=yes", "join"]
    assert runs == {"x": 3, "y": 2}  # y finished on the second try and was not run again


def test_interrupt_before_and_after_at_compile_time_and_per_call(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    app = diamond(checkpointer, interrupt_before=["b"])
    t = tid("compiled")
    out = app.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)
    assert texts(out) == ["hi", "a1"]
    assert app.get_state(t).next == ("b",)
    assert app.get_state(t).interrupts == ()
    out = app.invoke(None, thread_id=t)
    assert texts(out) == FIRST_TURN

    plain = diamond(checkpointer)
    t = tid("per-call")
    out = plain.invoke({"messages": [HumanMessage("hi")]}, thread_id=t, interrupt_after=["c"])
    assert texts(out) == FIRST_TURN[:5]
    assert plain.get_state(t).next == ("e",)
    out = plain.invoke(None, thread_id=t)
    assert texts(out) == FIRST_TURN
    t = tid("per-call-before")
    out = plain.invoke({"messages": [HumanMessage("hi")]}, thread_id=t, interrupt_before=["c"])
    assert texts(out) == FIRST_TURN[:3]
    assert plain.get_state(t).next == ("c", "d")
    # resuming is the caller's word to go on: the step it resumes is not paused again
    out = plain.invoke(None, thread_id=t, interrupt_before=["c", "e"])
    assert texts(out) == FIRST_TURN[:5]
    assert plain.get_state(t).next == ("e",)
    assert texts(plain.invoke(None, thread_id=t)) == FIRST_TURN

    after = diamond(checkpointer, interrupt_after=["a", "b"])
    t = tid("after")
    assert texts(after.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)) == ["hi", "a1"]
    assert texts(after.invoke(None, thread_id=t)) == ["hi", "a1", "b2"]
    assert texts(after.invoke(None, thread_id=t))[-1] == "e5"


def test_a_resume_answer_survives_a_failure_after_the_interrupt(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    """The node fails after interrupt() returned the answer; fixed, invoke(None) reuses it."""
    t = tid("t")
    state = {"fail": True, "runs": 0}

    def ask(s: State) -> dict[str, Any]:
        answer = interrupt("confirm?")
        state["runs"] += 1
        if state["fail"]:
            raise ConnectionError("flaky downstream call")
        return {"notes": [f"confirmed={answer}"]}

    g = StateGraph(State)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    app = g.compile(checkpointer=checkpointer)
    app.invoke({"notes": []}, thread_id=t)
    with pytest.raises(ConnectionError):
        app.invoke(Command(resume="yes"), thread_id=t)
    state["fail"] = False
    out = app.invoke(None, thread_id=t)
    assert app.get_state(t).interrupts == ()
    assert out.notes == ["confirmed=yes"]


def test_a_resume_command_does_not_silently_drop_its_update(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")

    def ask(state: State) -> dict[str, Any]:
        return {"notes": [f"answer={interrupt('q')}"]}

    g = StateGraph(State)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    app = g.compile(checkpointer=checkpointer)
    app.invoke({"notes": []}, thread_id=t)
    try:
        out = app.invoke(Command(resume="yes", update={"notes": ["edited"]}), thread_id=t)
    except InvalidUpdateError:
        return  # refusing it is fine too
    assert "edited" in out.notes


def edit_draft(app: Any, thread_id: str) -> None:
    draft = app.get_state(thread_id).values.messages[-1]
    app.update_state(thread_id, {"messages": [AIMessage("draft, edited", id=draft.id)]})


@pytest.mark.parametrize("answer_by", ["value", "id"])
def test_update_state_on_a_paused_thread_keeps_the_interrupt_waiting(
    checkpointer: BaseCheckpointer, tid: Tid, answer_by: str
) -> None:
    """Edit the state under a pending interrupt(), then answer it: the node re-runs on the edit."""
    t = tid("t")
    calls: dict[str, int] = {}
    app = approval_app(checkpointer, calls)
    app.invoke({"messages": [HumanMessage("write")]}, thread_id=t)
    before = app.get_state(t)
    (pause,) = before.interrupts
    edit_draft(app, t)
    after = app.get_state(t)
    assert after.metadata["source"] == "update"
    assert after.parent_id == before.checkpoint_id
    assert after.next == ("review",)
    assert after.interrupts == (pause,)  # same value, same id
    assert texts(after.values) == ["write", "draft, edited"]

    resume = "yes" if answer_by == "value" else {pause.id: "yes"}
    out = app.invoke(Command(resume=resume), thread_id=t)
    assert texts(out) == ["write", "draft, edited", "answer: yes", "publish3"]
    assert calls == {"before": 2, "after": 1}
    assert app.get_state(t).interrupts == ()


def test_update_state_on_a_paused_thread_then_invoke_none_asks_again(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    calls: dict[str, int] = {}
    app = approval_app(checkpointer, calls)
    app.invoke({"messages": [HumanMessage("write")]}, thread_id=t)
    edit_draft(app, t)
    app.invoke(None, thread_id=t)  # no answer given: the node asks again, about the edit
    (pause,) = app.get_state(t).interrupts
    assert pause.value == {"question": "ship it?", "draft": "draft, edited"}
    assert calls == {"before": 2}
    out = app.invoke(Command(resume="ok"), thread_id=t)
    assert texts(out)[-2:] == ["answer: ok", "publish3"]


def test_update_state_on_a_paused_step_keeps_finished_siblings(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    runs: dict[str, int] = {}

    def ask(state: State) -> dict[str, Any]:
        runs["ask"] = runs.get("ask", 0) + 1
        return {"notes": [f"ask={interrupt('?')}"]}

    g = StateGraph(State)
    g.add_node("ask", ask)
    g.add_node("done", appender("done", runs))
    g.add_node("join", appender("join", runs))
    g.add_edge(START, "ask")
    g.add_edge(START, "done")
    g.add_edge(["ask", "done"], "join")
    g.add_edge("join", END)
    app = g.compile(checkpointer=checkpointer)
    app.invoke({"notes": []}, thread_id=t)
    app.update_state(t, {"notes": ["edited"]})
    assert app.get_state(t).next == ("ask", "done")
    out = app.invoke(Command(resume="yes"), thread_id=t)
    # the update comes first; the paused step's writes merge when it completes
    assert out.notes == ["edited", "ask=yes", "done", "join"]
    assert runs == {"ask": 2, "done": 1, "join": 1}


def test_update_state_as_the_paused_node_supersedes_its_interrupt(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    """as_node says "this is what the node produced": the question is no longer open."""
    t = tid("t")
    calls: dict[str, int] = {}
    app = approval_app(checkpointer, calls)
    app.invoke({"messages": [HumanMessage("write")]}, thread_id=t)
    app.update_state(t, {"messages": [AIMessage("answered by hand")]}, as_node="review")
    state = app.get_state(t)
    assert state.interrupts == ()
    assert state.next == ("publish",)
    with pytest.raises(InvalidUpdateError, match="not waiting"):
        app.invoke(Command(resume="yes"), thread_id=t)
    out = app.invoke(None, thread_id=t)
    assert texts(out) == ["write", "draft1", "answered by hand", "publish3"]
    assert calls == {"before": 1}  # review did not run again


def subgraph_app(store: BaseCheckpointer, inner: StateGraph, *, sibling: Any = None) -> Any:
    """START -> review (the compiled `inner`) -> after -> END; `sibling` runs beside review."""
    g = StateGraph(State)
    g.add_node("review", inner.compile())
    g.add_node("after", appender("after"))
    g.add_edge(START, "review")
    if sibling is None:
        g.add_edge("review", "after")
    else:
        g.add_node("sibling", sibling)
        g.add_edge(START, "sibling")
        g.add_edge(["review", "sibling"], "after")
    g.add_edge("after", END)
    return g.compile(checkpointer=store)


def test_an_interrupt_inside_a_subgraph_pauses_the_parent_thread(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    calls: dict[str, int] = {}

    def ask(state: State) -> dict[str, Any]:
        calls["ask"] = calls.get("ask", 0) + 1
        return {"notes": [f"answer={interrupt('approve?')}"]}

    inner = StateGraph(State)
    inner.add_node("prepare", appender("prepare", calls))
    inner.add_node("ask", ask)
    inner.add_edge(START, "prepare")
    inner.add_edge("prepare", "ask")
    inner.add_edge("ask", END)
    app = subgraph_app(checkpointer, inner)
    paused = app.invoke({"notes": []}, thread_id=t)
    assert paused.notes == []  # the subgraph's node did not finish: nothing of it merged
    state = app.get_state(t)
    assert state.next == ("review",)
    (pause,) = state.interrupts
    assert pause.value == "approve?"
    assert pause.node == "review/ask"
    assert calls == {"prepare": 1, "ask": 1}

    out = app.invoke(Command(resume="yes"), thread_id=t)
    assert out.notes == ["prepare", "answer=yes", "after"]
    assert texts(out) == ["prepare0", "after1"]
    assert calls == {"prepare": 2, "ask": 2}  # the subgraph ran again from its start
    assert app.get_state(t).interrupts == ()
    with pytest.raises(InvalidUpdateError, match="not waiting"):
        app.invoke(Command(resume="again"), thread_id=t)


def test_two_interrupts_in_a_row_inside_a_subgraph(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    """Two in one inner node, then one in the next inner node: each answered in turn."""
    t = tid("t")
    seen: list[str] = []

    def form(state: State) -> dict[str, Any]:
        name = interrupt("name?")
        age = interrupt("age?")
        seen.append(f"form {name}/{age}")
        return {"notes": [f"{name}/{age}"]}

    def confirm(state: State) -> dict[str, Any]:
        answer = interrupt(f"confirm {state.notes[-1]}?")
        seen.append(f"confirm {answer}")
        return {"notes": [f"confirmed={answer}"]}

    inner = StateGraph(State)
    inner.add_node("form", form)
    inner.add_node("confirm", confirm)
    inner.add_edge(START, "form")
    inner.add_edge("form", "confirm")
    inner.add_edge("confirm", END)
    app = subgraph_app(checkpointer, inner)
    app.invoke({"notes": []}, thread_id=t)
    (first,) = app.get_state(t).interrupts
    assert (first.value, first.node) == ("name?", "review/form")
    app.invoke(Command(resume="Ada"), thread_id=t)
    (second,) = app.get_state(t).interrupts
    assert (second.value, second.node) == ("age?", "review/form")
    app.invoke(Command(resume={second.id: 36}), thread_id=t)  # by id
    (third,) = app.get_state(t).interrupts
    assert (third.value, third.node) == ("confirm Ada/36?", "review/confirm")
    assert len({first.id, second.id, third.id}) == 3
    assert app.get_state(t).next == ("review",)
    out = app.invoke(Command(resume={third.id: "yes"}), thread_id=t)
    assert out.notes == ["Ada/36", "confirmed=yes", "after"]
    assert seen == ["form Ada/36", "form Ada/36", "confirm yes"]
    assert app.get_state(t).interrupts == ()


def test_parallel_interrupts_inside_a_subgraph_are_resumed_by_id(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")

    def asker(name: str) -> Any:
        def node(state: State) -> dict[str, Any]:
            return {"notes": [f"{name}={interrupt(f'{name}?')}"]}

        return node

    inner = StateGraph(State)
    inner.add_node("x", asker("x"))
    inner.add_node("y", asker("y"))
    inner.add_edge(START, "x")
    inner.add_edge(START, "y")
    inner.add_edge("x", END)
    inner.add_edge("y", END)
    app = subgraph_app(checkpointer, inner)
    app.invoke({"notes": []}, thread_id=t)
    by_node = {i.node: i for i in app.get_state(t).interrupts}
    assert {n: i.value for n, i in by_node.items()} == {"review/x": "x?", "review/y": "y?"}
    with pytest.raises(InvalidUpdateError, match="2 interrupts are waiting"):
        app.invoke(Command(resume="ambiguous"), thread_id=t)
    app.invoke(Command(resume={by_node["review/y"].id: "yes"}), thread_id=t)
    (left,) = app.get_state(t).interrupts
    assert left == by_node["review/x"]
    out = app.invoke(Command(resume={left.id: "ok"}), thread_id=t)
    assert out.notes == ["x=ok", "y=yes", "after"]


def test_an_interrupt_two_subgraphs_deep_is_resumed_by_id(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")

    def ask(state: State) -> dict[str, Any]:
        return {"notes": [f"deep={interrupt('deep?')}"]}

    innermost = StateGraph(State)
    innermost.add_node("ask", ask)
    innermost.add_edge(START, "ask")
    innermost.add_edge("ask", END)
    middle = StateGraph(State)
    middle.add_node("lead", appender("lead"))
    middle.add_node("inner", innermost.compile())
    middle.add_edge(START, "lead")
    middle.add_edge("lead", "inner")
    middle.add_edge("inner", END)
    app = subgraph_app(checkpointer, middle)
    app.invoke({"notes": []}, thread_id=t)
    (pause,) = app.get_state(t).interrupts
    assert (pause.value, pause.node) == ("deep?", "review/inner/ask")
    out = app.invoke(Command(resume={pause.id: 42}), thread_id=t)
    # each subgraph's final state goes through its parent's operator.add (as in
    # LangGraph): the middle graph gets ["lead"] back from "inner" and adds it again
    assert out.notes == ["lead", "lead", "deep=42", "after"]


def test_a_subgraph_interrupt_keeps_its_siblings_writes_pending(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    """The sibling that finished in the paused step is not run again on resume."""
    t = tid("t")
    calls: dict[str, int] = {}

    def ask(state: State) -> dict[str, Any]:
        calls["ask"] = calls.get("ask", 0) + 1
        return {"notes": [f"answer={interrupt('approve?')}"]}

    inner = StateGraph(State)
    inner.add_node("ask", ask)
    inner.add_edge(START, "ask")
    inner.add_edge("ask", END)
    app = subgraph_app(checkpointer, inner, sibling=appender("sibling", calls))
    paused = app.invoke({"notes": []}, thread_id=t)
    assert paused.notes == []  # the step did not finish: the sibling's writes are pending
    state = app.get_state(t)
    assert state.next == ("review", "sibling")
    assert [i.node for i in state.interrupts] == ["review/ask"]
    assert calls == {"ask": 1, "sibling": 1}

    out = app.invoke(Command(resume="yes"), thread_id=t)
    assert out.notes == ["answer=yes", "sibling", "after"]
    assert texts(out) == ["sibling0", "after1"]
    assert calls == {"ask": 2, "sibling": 1}


# -- pending writes ------------------------------------------------------------------------


def test_a_failed_step_keeps_its_finished_siblings_writes(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    calls: dict[str, int] = {}
    broken = {"on": True}

    def flaky(state: State) -> dict[str, Any]:
        calls["flaky"] = calls.get("flaky", 0) + 1
        if broken["on"]:
            raise RuntimeError("tool backend down")
        return {"messages": [AIMessage("flaky ok")], "notes": ["flaky"]}

    g = StateGraph(State)
    g.add_node("start", appender("start", calls))
    g.add_node("steady", appender("steady", calls))
    g.add_node("flaky", flaky)
    g.add_node("end", appender("end", calls))
    g.add_edge(START, "start")
    g.add_edge("start", "steady")
    g.add_edge("start", "flaky")
    g.add_edge(["steady", "flaky"], "end")
    g.add_edge("end", END)
    app = g.compile(checkpointer=checkpointer)
    with pytest.raises(RuntimeError, match="tool backend down"):
        app.invoke({"messages": [HumanMessage("go")]}, thread_id=t)
    state = app.get_state(t)
    assert state.next == ("steady", "flaky")
    assert state.step == 1
    assert texts(state.values) == ["go", "start1"]
    assert calls == {"start": 1, "steady": 1, "flaky": 1}

    broken["on"] = False
    out = app.invoke(None, thread_id=t)
    assert calls == {"start": 1, "steady": 1, "flaky": 2, "end": 1}
    assert texts(out) == ["go", "start1", "steady2", "flaky ok", "end4"]
    assert out.notes == ["start", "steady", "flaky", "end"]
    assert [h.step for h in assert_linear_history(app, t)] == [3, 2, 1, 0, -1]


def test_a_failed_send_task_is_the_only_one_run_again(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    seen: list[int] = []
    broken = {3}

    def work(item: int) -> dict[str, Any]:
        seen.append(item)
        if item in broken:
            raise RuntimeError(f"item {item} failed")
        return {"notes": [f"done {item}"]}

    g = StateGraph(State)
    g.add_node("plan", lambda s: {"count": 5})
    g.add_node("work", work)
    g.add_conditional_edges("plan", lambda s: [Send("work", i) for i in range(s.count)], ["work"])
    g.add_edge(START, "plan")
    g.add_edge("work", END)
    app = g.compile(checkpointer=checkpointer)
    with pytest.raises(RuntimeError, match="item 3 failed"):
        app.invoke({"notes": []}, thread_id=t)
    assert sorted(seen) == [0, 1, 2, 3, 4]
    broken.clear()
    out = app.invoke(None, thread_id=t)
    assert sorted(seen) == [0, 1, 2, 3, 3, 4]
    assert out.notes == [f"done {i}" for i in range(5)]  # task order, not finish order


# -- the transcript invariant --------------------------------------------------------------


def tool_app(store: BaseCheckpointer, seen: list[list[Any]]) -> Any:
    """agent asks for two tools once; tools answers them; agent checks every call is answered."""

    def agent(state: State) -> dict[str, Any]:
        messages = list(state.messages)
        seen.append(messages)
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        for m in messages:
            if isinstance(m, AIMessage):
                assert {c.id for c in m.tool_calls} <= answered, "a provider would answer 400"
        if state.count == 0:
            calls = [
                ToolCall(id="call-weather", name="weather", args={"city": "Paris"}),
                ToolCall(id="call-time", name="time", args={}),
            ]
            return {"messages": [AIMessage("", tool_calls=calls)], "count": 1}
        return {"messages": [AIMessage(f"final after {len(messages)}")]}

    def tools(state: State) -> dict[str, Any]:
        last = state.messages[-1]
        assert isinstance(last, AIMessage)
        return {
            "messages": [ToolMessage(f"{c.name} ok", tool_call_id=c.id) for c in last.tool_calls]
        }

    def route(state: State) -> str:
        last = state.messages[-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    g = StateGraph(State)
    g.add_node("agent", agent)
    g.add_node("tools", tools)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["tools", END])
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=store, interrupt_before=["tools"])


def test_a_new_message_after_unanswered_tool_calls_gets_error_results_first(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    seen: list[list[Any]] = []
    app = tool_app(checkpointer, seen)
    app.invoke({"messages": [HumanMessage("weather and time?")]}, thread_id=t)
    assert app.get_state(t).next == ("tools",)
    out = app.invoke({"messages": [HumanMessage("never mind, tell a joke")]}, thread_id=t)
    kinds = [(m.type, getattr(m, "tool_call_id", None)) for m in out.messages]
    assert kinds == [
        ("human", None),
        ("ai", None),
        ("tool", "call-weather"),
        ("tool", "call-time"),
        ("human", None),
        ("ai", None),
    ]
    for cancelled in out.messages[2:4]:
        assert cancelled.status == "error"
        assert cancelled.text
    assert [m.name for m in out.messages[2:4]] == ["weather", "time"]
    assert out.messages[4].text == "never mind, tell a joke"
    assert out.messages[5].text == "final after 5"
    assert len({m.id for m in out.messages}) == 6
    stored = app.get_state(t).values
    assert fields(stored) == fields(out)


def test_resuming_after_tool_calls_runs_the_tools(checkpointer: BaseCheckpointer, tid: Tid) -> None:
    t = tid("t")
    seen: list[list[Any]] = []
    app = tool_app(checkpointer, seen)
    app.invoke({"messages": [HumanMessage("weather and time?")]}, thread_id=t)
    out = app.invoke(None, thread_id=t)
    assert [(m.type, m.text) for m in out.messages] == [
        ("human", "weather and time?"),
        ("ai", ""),
        ("tool", "weather ok"),
        ("tool", "time ok"),
        ("ai", "final after 4"),
    ]
    assert all(m.status == "success" for m in out.messages if isinstance(m, ToolMessage))


def test_tool_results_given_as_the_new_input_are_not_cancelled(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    """A person (or another system) answers the paused tool calls by sending the results."""
    t = tid("t")
    seen: list[list[Any]] = []
    app = tool_app(checkpointer, seen)
    app.invoke({"messages": [HumanMessage("weather and time?")]}, thread_id=t)
    results = [
        ToolMessage("18°C", tool_call_id="call-weather"),
        ToolMessage("noon", tool_call_id="call-time"),
    ]
    out = app.invoke({"messages": results}, thread_id=t)
    answers = [m for m in out.messages if isinstance(m, ToolMessage)]
    assert [m.text for m in answers] == ["18°C", "noon"]


# -- serialization at write time -----------------------------------------------------------


class Opaque:
    """Not a type the codec knows."""


def mixed_app(store: BaseCheckpointer, broken: dict[str, bool]) -> Any:
    def fine(state: State) -> dict[str, Any]:
        return {"notes": ["fine"]}

    def bad(state: State) -> dict[str, Any]:
        if broken["on"]:
            return {"notes": ["ok", Opaque()]}  # type: ignore[list-item]
        return {"notes": ["fixed"]}

    g = StateGraph(State)
    g.add_node("fine", fine)
    g.add_node("bad", bad)
    g.add_edge(START, "fine")
    g.add_edge(START, "bad")
    g.add_edge("fine", END)
    g.add_edge("bad", END)
    return g.compile(checkpointer=store)


def test_an_unencodable_value_fails_its_step_and_the_last_checkpoint_stays_resumable(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    broken = {"on": True}
    app = mixed_app(checkpointer, broken)
    with pytest.raises(SerializationError) as caught:
        app.invoke({"notes": ["in"]}, thread_id=t)
    assert "bad" in str(caught.value)
    assert "Opaque" in str(caught.value)
    state = app.get_state(t)
    assert state.step == 0
    assert state.metadata["source"] == "input"
    assert state.next == ("fine", "bad")
    assert state.values.notes == ["in"]
    # only the input step is stored (and shows the empty checkpoint before it)
    assert [(h.step, h.next) for h in app.get_state_history(t)] == [
        (0, ("fine", "bad")),
        (-1, (START,)),
    ]
    broken["on"] = False
    out = app.invoke(None, thread_id=t)
    assert out.notes == ["in", "fine", "fixed"]


def test_an_unencodable_value_is_reported_by_its_node_and_state_path(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    app = mixed_app(checkpointer, {"on": True})
    with pytest.raises(SerializationError) as caught:
        app.invoke({"notes": ["in"]}, thread_id=tid("t"))
    error = caught.value
    assert "'bad'" in str(error)
    assert "fine" not in str(error)
    assert error.path == "notes[1]"


def test_an_unencodable_message_field_names_the_node(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    def chatty(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("hi", metadata={"raw": Opaque()})]}

    g = StateGraph(State)
    g.add_node("chatty", chatty)
    g.add_edge(START, "chatty")
    g.add_edge("chatty", END)
    app = g.compile(checkpointer=checkpointer)
    t = tid("t")
    with pytest.raises(SerializationError) as caught:
        app.invoke({"notes": []}, thread_id=t)
    assert app.get_state(t).step == 0
    assert "'chatty'" in str(caught.value)
    assert caught.value.path == "messages[0].metadata.raw"


# -- one writer per thread -----------------------------------------------------------------


def test_two_concurrent_runs_on_one_thread_one_fails_and_history_stays_linear(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")

    async def scenario() -> list[Any]:
        release = asyncio.Event()
        inside = 0

        async def slow(state: State) -> dict[str, Any]:
            nonlocal inside
            inside += 1
            await release.wait()
            return {"notes": ["slow"]}

        g = StateGraph(State)
        g.add_node("slow", slow)
        g.add_edge(START, "slow")
        g.add_edge("slow", END)
        app = g.compile(checkpointer=checkpointer, interrupt_before=["slow"])
        await app.ainvoke({"notes": ["start"]}, thread_id=t)  # paused before 'slow'
        runs = [asyncio.create_task(app.ainvoke(None, thread_id=t)) for _ in range(2)]
        for _ in range(500):  # one run is inside the node; the other was refused at once
            if inside == 1 and any(r.done() for r in runs):
                break
            await asyncio.sleep(0.01)
        assert inside == 1
        release.set()
        return await asyncio.gather(*runs, return_exceptions=True)

    results = asyncio.run(scenario())
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 1, results
    (error,) = errors
    assert isinstance(error, ConcurrentRunError)
    assert error.thread_id == t
    assert t in str(error)
    (winner,) = [r for r in results if not isinstance(r, BaseException)]
    assert winner.notes == ["start", "slow"]
    app = diamond(checkpointer)  # any graph reads the history
    history = assert_linear_history(app, t)
    assert [(h.step, h.values.notes) for h in history] == [
        (1, ["start", "slow"]),  # one step: the loser wrote nothing
        (0, ["start"]),
        (-1, []),
    ]


def test_a_second_input_while_the_first_is_mid_run_is_refused_at_once(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    """In one process the thread is taken: the second run fails before it writes anything.

    (Across processes the compare-and-set at the next write decides; see the conformance
    suite's multi-process race.)
    """
    t = tid("t")

    async def scenario() -> list[Any]:
        release = asyncio.Event()
        inside = 0

        async def slow(state: State) -> dict[str, Any]:
            nonlocal inside
            inside += 1
            await release.wait()
            return {"notes": ["slow"]}

        async def until(condition: Callable[[], bool]) -> None:
            for _ in range(1000):
                if condition():
                    return
                await asyncio.sleep(0.01)
            raise AssertionError("timed out")

        g = StateGraph(State)
        g.add_node("slow", slow)
        g.add_edge(START, "slow")
        g.add_edge("slow", END)
        app = g.compile(checkpointer=checkpointer)
        first = asyncio.create_task(app.ainvoke({"notes": ["1"]}, thread_id=t))
        await until(lambda: inside == 1)  # the first input is stored, its node waits
        second = asyncio.create_task(app.ainvoke({"notes": ["2"]}, thread_id=t))
        await until(second.done)
        release.set()
        return await asyncio.gather(first, second, return_exceptions=True)

    first, second = asyncio.run(scenario())
    assert isinstance(second, ConcurrentRunError), second
    assert second.thread_id == t
    assert first.notes == ["1", "slow"]
    history = assert_linear_history(diamond(checkpointer), t)
    assert [h.values.notes for h in history] == [["1", "slow"], ["1"], []]  # nothing of "2"


class RaceOnFirstHead(BaseCheckpointer):
    """Delegates to a store; the first `head()` after `arm()` lets another run finish first.

    Its leases always grant, so only the head's compare-and-set (the second line of
    defence) keeps the two runs apart.
    """

    def __init__(self, inner: BaseCheckpointer) -> None:
        self.inner = inner
        self.is_nonblocking = getattr(inner, "is_nonblocking", False)
        self.meanwhile: Callable[[], None] | None = None

    def head(self, thread_id: str) -> str | None:
        found = self.inner.head(thread_id)
        meanwhile, self.meanwhile = self.meanwhile, None
        if meanwhile is not None:
            worker = threading.Thread(target=meanwhile)
            worker.start()
            worker.join()
        return found

    def put(self, record: CheckpointRecord, *, expected_head: str | None, messages: Any) -> None:
        self.inner.put(record, expected_head=expected_head, messages=messages)

    def put_pending(self, thread_id: str, checkpoint_id: str, writes: Any) -> None:
        self.inner.put_pending(thread_id, checkpoint_id, writes)

    def get(self, thread_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        return self.inner.get(thread_id, checkpoint_id)

    def chain(self, thread_id: str, checkpoint_id: str) -> list[CheckpointRecord]:
        return self.inner.chain(thread_id, checkpoint_id)

    def messages(self, thread_id: str, keys: Any) -> dict[str, bytes]:
        return self.inner.messages(thread_id, keys)

    def pending(self, thread_id: str, checkpoint_id: str) -> Any:
        return self.inner.pending(thread_id, checkpoint_id)

    def history(
        self, thread_id: str, *, limit: int | None = None, before: str | None = None
    ) -> list[CheckpointRecord]:
        return self.inner.history(thread_id, limit=limit, before=before)

    def threads(self) -> list[str]:
        return self.inner.threads()

    def delete_thread(self, thread_id: str) -> None:
        self.inner.delete_thread(thread_id)

    def prune(self, thread_id: str, keep_last: int) -> int:
        return self.inner.prune(thread_id, keep_last)

    def forget_messages(self, thread_id: str, keep: set[str]) -> int:
        return self.inner.forget_messages(thread_id, keep)

    def acquire_lease(self, *args: Any, **kwargs: Any) -> None:
        return None

    def renew_lease(self, thread_id: str, run_id: str, owner: str, lease_s: float) -> bool:
        return True

    def release_lease(self, thread_id: str, run_id: str, owner: str) -> None:
        pass

    def read_lease(self, thread_id: str) -> None:
        return None


def test_two_runs_starting_a_new_thread_at_once_never_make_two_roots(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    store = RaceOnFirstHead(checkpointer)
    app = diamond(store)
    other = diamond(checkpointer)  # another app, as another process would be
    store.meanwhile = lambda: other.invoke({"messages": [HumanMessage("other")]}, thread_id=t)
    with contextlib.suppress(ConcurrentRunError):
        app.invoke({"messages": [HumanMessage("mine")]}, thread_id=t)
    history = assert_linear_history(app, t)
    assert [h.parent_id for h in history].count(None) == 1


# -- deterministic ids ---------------------------------------------------------------------


def test_a_step_rerun_after_a_failure_makes_the_same_message_ids(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    broken = {"on": True}

    def second(state: State) -> dict[str, Any]:
        if broken["on"]:
            raise RuntimeError("down")
        return {"messages": [AIMessage("second"), AIMessage("second, more")]}

    g = StateGraph(State)
    g.add_node("prep", appender("prep"))
    g.add_node("first", lambda s: {"messages": [AIMessage("first")]})
    g.add_node("second", second)
    g.add_node("last", appender("last"))
    g.add_edge(START, "prep")
    g.add_edge("prep", "first")
    g.add_edge("prep", "second")
    g.add_edge(["first", "second"], "last")
    g.add_edge("last", END)
    app = g.compile(checkpointer=checkpointer)
    with pytest.raises(RuntimeError):
        for _ in app.stream({"messages": [HumanMessage("go")]}, thread_id=t, mode="updates"):
            pass
    failed_at = app.get_state(t)
    broken["on"] = False
    resumed = {
        p.node: [m.id for m in p.data.get("messages", [])]
        for p in app.stream(None, thread_id=t, mode="updates")
    }
    # the same step run again from the same checkpoint, as a fork: the ids the aborted
    # attempt would have had, since ids derive from (thread, parent checkpoint, step, task)
    replayed = {
        p.node: [m.id for m in p.data.get("messages", [])]
        for p in app.stream(
            None, thread_id=t, checkpoint_id=failed_at.checkpoint_id, mode="updates"
        )
    }
    # the failed step's nodes; 'last' follows a different parent checkpoint on each branch
    assert {n: resumed[n] for n in ("first", "second")} == {
        n: replayed[n] for n in ("first", "second")
    }
    assert len(resumed["second"]) == 2
    assert len(set(resumed["first"] + resumed["second"] + resumed["last"])) == 4


# -- storage grows with what changed -------------------------------------------------------


class RecordingSQLite(SQLiteCheckpointer):
    """Counts the bytes each put writes: its payload and the new messages' bytes."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.writes: list[tuple[int, int, bool]] = []

    def put(self, record: CheckpointRecord, *, expected_head: str | None, messages: Any) -> None:
        super().put(record, expected_head=expected_head, messages=messages)
        self.writes.append(
            (
                len(record.payload),
                sum(len(v) for v in messages.values()),
                record.base_id == record.checkpoint_id,
            )
        )


TURNS = 150
WINDOW = 50


def test_a_long_conversation_stores_each_message_once_and_constant_bytes_per_step(
    tmp_path: Path,
) -> None:
    path = tmp_path / "long.db"
    store = RecordingSQLite(path)

    def agent(state: State) -> dict[str, Any]:
        turn = len(state.notes)
        update: list[Any] = [AIMessage(f"Answer {turn}: " + "lorem ipsum dolor sit amet " * 8)]
        if turn % 10 == 0:  # now and then the agent rewrites its running summary in place
            update.append(AIMessage(f"summary as of turn {turn}", id="summary"))
        return {"messages": update, "notes": [f"turn {turn}"]}

    g = StateGraph(State)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    app = g.compile(checkpointer=store)
    naive = 0  # one full state per checkpoint: every 5th state dumped, times 5
    versions: set[bytes] = set()
    seen: dict[int, Any] = {}  # messages are shared between states: encode each object once
    for turn in range(TURNS):
        question = HumanMessage(f"Question {turn}: " + "what about this? " * 5)
        for part in app.stream({"messages": [question]}, thread_id="t", mode="values"):
            if part.step % 5 == 0:
                naive += 5 * len(serde.dumps(fields(part.data)))
            for m in part.data.messages:
                if seen.get(id(m)) is not m:
                    seen[id(m)] = m
                    versions.add(serde.dumps(m))
    final = app.get_state("t")
    close_quietly(store)
    assert len(final.values.messages) == 2 * TURNS + 1  # summary kept in place
    assert len(store.writes) == 2 * TURNS

    # (a) every message version is stored once
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = db.execute("SELECT count(*) FROM messages").fetchone()[0]
        stored = db.execute(
            "SELECT (SELECT sum(length(payload)) FROM checkpoints) + "
            "(SELECT sum(length(data)) FROM messages)"
        ).fetchone()[0]
    size = path.stat().st_size
    assert rows == len(versions)

    # (b) bytes written per checkpoint do not grow with the history: at the end, snapshots
    # included, a checkpoint costs a small multiple of what its own step wrote
    per_put = [payload + new for payload, new, _ in store.writes]
    deltas = [payload + new for payload, new, snapshot in store.writes if not snapshot]
    delta = sum(deltas) / len(deltas)
    end = sum(per_put[-WINDOW:]) / WINDOW
    assert end <= 2.5 * delta, (delta, end)
    assert any(snapshot for *_, snapshot in store.writes[-WINDOW:])
    # a small state is not copied every few steps (MIN_BYTES_BETWEEN_SNAPSHOTS)
    assert sum(snapshot for *_, snapshot in store.writes) <= 12

    # (c) the whole database is far smaller than one full state per checkpoint
    assert stored * 20 < naive, (stored, naive)
    assert size * 10 < naive, (size, naive)


def test_a_message_dropped_from_the_state_never_lends_its_key_to_a_new_one(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    """Stored messages are known by object id; a freed object's id may be reused at once.

    Each turn removes every message and writes fresh ones, so the old objects
    could be freed and their ids handed to the new messages: every checkpoint
    must still rebuild (cold, from the store) to exactly what the run streamed.
    """

    def churn(state: State) -> dict[str, Any]:
        gone = [RemoveMessage(m.id) for m in state.messages if m.id is not None]
        fresh = [AIMessage(f"turn {len(state.notes)} part {i}") for i in range(3)]
        return {"messages": [*gone, *fresh], "notes": ["x"]}

    g = StateGraph(State)
    g.add_node("churn", churn)
    g.add_edge(START, "churn")
    g.add_edge("churn", END)
    app = g.compile(checkpointer=checkpointer)
    thread = tid("churn")
    live: dict[str, dict[str, Any]] = {}
    for turn in range(12):
        parts = list(app.stream({"messages": [HumanMessage(f"q{turn}")]}, thread_id=thread))
        assert parts
        state = app.get_state(thread)
        live[state.checkpoint_id] = fields(state.values)
    cold = g.compile(checkpointer=checkpointer)  # no cache: every state replayed from the store
    for checkpoint_id, values in live.items():
        rebuilt = cold.get_state(thread, checkpoint_id=checkpoint_id)
        assert fields(rebuilt.values) == values
        assert texts(rebuilt.values)[-3:] == [
            f"turn {len(values['notes']) - 1} part {i}" for i in range(3)
        ]


def test_the_wal_file_shrinks_back_after_a_burst(tmp_path: Path) -> None:
    """A 12 MB step, then ordinary ones: the -wal file is cut back to the size limit."""
    from flowgraph.checkpoint.sqlite import WAL_SIZE_LIMIT

    path = tmp_path / "burst.db"
    wal = path.with_name(path.name + "-wal")
    store = SQLiteCheckpointer(path)
    g = StateGraph(State)
    g.add_node("reply", appender("reply"))
    g.add_edge(START, "reply")
    g.add_edge("reply", END)
    app = g.compile(checkpointer=store)
    try:
        burst = [HumanMessage(f"{i:04d}" + "x" * 40_000) for i in range(300)]
        app.invoke({"messages": burst}, thread_id="burst")
        for i in range(30):
            app.invoke({"messages": [HumanMessage(f"turn {i}")]}, thread_id="steady")
        app.delete_thread("burst")  # a second burst: freeing 12 MB of pages
        for i in range(30):
            app.invoke({"messages": [HumanMessage(f"turn {i}")]}, thread_id="steady")
        assert 0 < wal.stat().st_size <= WAL_SIZE_LIMIT
        assert len(app.get_state("steady").values.messages) == 120
    finally:
        store.close()


def test_pruning_drops_message_versions_no_kept_checkpoint_needs(tmp_path: Path) -> None:
    """A message rewritten every step (a running summary, a status line) leaves old versions."""
    path = tmp_path / "c.db"
    store = SQLiteCheckpointer(path)

    def agent(state: State) -> dict[str, Any]:
        return {
            "messages": [AIMessage(f"summary {state.count}: " + "s" * 2000, id="summary")],
            "count": state.count + 1,
        }

    g = StateGraph(State)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", lambda s: "agent" if s.count < 60 else END, ["agent", END])
    app = g.compile(checkpointer=store)
    app.invoke({"messages": [HumanMessage("go")]}, thread_id="t")
    app.prune("t", keep_last=2)
    kept = list(app.get_state_history("t"))
    needed = {(m.id, m.text) for h in kept for m in h.values.messages}
    with contextlib.closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT count(*) FROM messages WHERE thread_id = 't'").fetchone()[0]
    close_quietly(store)
    assert rows == len(needed), f"{rows} message rows kept, {len(needed)} needed"
