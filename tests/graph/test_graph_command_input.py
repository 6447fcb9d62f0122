"""`invoke(Command(update=..., goto=...))`: a run routed from outside, as LangGraph runs it.

The update is merged as the run's input step (checkpointed, source "input"),
the goto targets (node names or Sends) are the next tasks instead of
START's edges, and whatever the thread still had to do (a pause, a stop
before a node) runs with them; with `resume=` the pause is answered too.
"""

from __future__ import annotations

import asyncio
import operator
import threading
from typing import Annotated, Any

import pytest
from pydantic import Field

from flowgraph import END, START, Command, MessagesState, Send, StateGraph, interrupt
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.errors import GraphValidationError, InvalidUpdateError


class State(MessagesState):
    trail: Annotated[list[str], operator.add] = Field(default_factory=list)
    x: int = 0


def mark(name: str) -> Any:
    def node(state: State) -> dict[str, Any]:
        return {"trail": [f"{name}@{state.x}"]}

    return node


def ask(state: State) -> dict[str, Any]:
    return {"trail": [f"ask:{interrupt('approve?')}@{state.x}"]}


def build(checkpointer: MemoryCheckpointer | None = None) -> Any:
    """START -> a -> b -> END; c, ask and w are reached only by routing (a's path_map)."""
    g = StateGraph(State)
    for name in ("a", "b", "c"):
        g.add_node(name, mark(name))
    g.add_node("ask", ask)
    g.add_node("w", lambda arg: {"trail": [f"w:{arg['item']}"]})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "b", ["b", "c", "ask", "w"])
    for name in ("b", "c", "ask", "w"):
        g.add_edge(name, END)
    return g.compile(checkpointer=checkpointer)


def test_goto_on_a_finished_thread_runs_that_node_after_the_update() -> None:
    app = build(MemoryCheckpointer())
    app.invoke({"x": 1}, thread_id="t")

    out = app.invoke(Command(update={"x": 5}, goto="c"), thread_id="t")
    history = list(app.get_state_history("t"))

    assert out.trail == ["a@1", "b@1", "c@5"]  # c ran on the updated state; a did not
    assert [(s.metadata["source"], s.next) for s in history[:2]] == [
        ("loop", ()),
        ("input", ("c",)),
    ]
    assert history[1].values.x == 5


def test_goto_starts_a_new_thread_or_a_run_without_checkpointer_there() -> None:
    app = build(MemoryCheckpointer())

    fresh = app.invoke(Command(goto="c", update={"x": 2}), thread_id="new")
    stateless = build().invoke(Command(goto=["c", "b"]))

    assert fresh.trail == ["c@2"]
    assert app.get_state("new").step == 1
    assert stateless.trail == ["c@0", "b@0"]


def test_goto_takes_sends_and_runs_a_node_named_twice_once() -> None:
    app = build(MemoryCheckpointer())

    out = app.invoke(
        Command(goto=[Send("w", {"item": 1}), "c", Send("w", {"item": 2}), "c"]), thread_id="s"
    )

    assert out.trail == ["w:1", "c@0", "w:2"]


def test_resume_update_and_goto_together_answer_the_pause_and_run_the_target() -> None:
    app = build(MemoryCheckpointer())
    paused = app.invoke(Command(goto="ask"), thread_id="p")
    assert [i.value for i in paused["__interrupt__"]] == ["approve?"]

    out = app.invoke(Command(resume="yes", update={"x": 9}, goto="c"), thread_id="p")
    steps = [(s.metadata["source"], s.next) for s in app.get_state_history("p")]

    # the paused node and the target ran in one step, both on the update
    assert out.trail == ["ask:yes@9", "c@9"]
    assert steps == [("loop", ()), ("input", ("ask", "c")), ("input", ("ask",))]


def test_an_update_alone_continues_a_thread_stopped_before_a_node() -> None:
    app = build(MemoryCheckpointer())
    app.invoke({"x": 1}, thread_id="t", interrupt_before=["b"])
    assert app.get_state("t").next == ("b",)

    out = app.invoke(Command(update={"x": 7}), thread_id="t", interrupt_before=["b"])

    assert out.trail == ["a@1", "b@7"]  # the edited state; the breakpoint is not taken again


def test_an_update_under_a_pause_keeps_it_waiting() -> None:
    app = build(MemoryCheckpointer())
    app.invoke(Command(goto="ask"), thread_id="p")

    again = app.invoke(Command(update={"x": 3}), thread_id="p")
    done = app.invoke(Command(resume="ok"), thread_id="p")

    assert [i.value for i in again["__interrupt__"]] == ["approve?"]
    assert done.trail == ["ask:ok@3"]


def test_refusals_store_nothing() -> None:
    app = build(MemoryCheckpointer())
    app.invoke({"x": 1}, thread_id="t")
    head = app.get_state("t").checkpoint_id

    with pytest.raises(GraphValidationError, match="'ghost', which is not a node"):
        app.invoke(Command(goto="ghost", update={"x": 2}), thread_id="t")
    with pytest.raises(InvalidUpdateError, match="not waiting at an interrupt"):
        app.invoke(Command(resume="yes", goto="c"), thread_id="t")
    with pytest.raises(InvalidUpdateError, match="'nope', which is not a field"):
        app.invoke(Command(update={"nope": 1}, goto="c"), thread_id="t")
    with pytest.raises(InvalidUpdateError, match="dict of state fields or a list"):
        app.invoke(Command(update="x=3", goto="c"), thread_id="t")
    with pytest.raises(InvalidUpdateError, match="empty Command"):
        app.invoke(Command(), thread_id="t")
    with pytest.raises(InvalidUpdateError, match="no checkpoint to resume"):
        app.invoke(Command(resume="yes", goto="c"), thread_id="never")

    assert app.get_state("t").checkpoint_id == head
    assert app.threads() == ["t"]


def test_stream_shows_the_update_first_then_the_routed_steps() -> None:
    app = build(MemoryCheckpointer())

    async def collect() -> list[tuple[str, str | None, Any]]:
        parts = app.astream(
            Command(update=[("x", 3), ("trail", ["given"])], goto="b"),
            thread_id="s",
            mode=["values", "updates"],
        )
        return [(p.mode, p.node, p.data) async for p in parts]

    got = asyncio.run(collect())

    assert [(mode, node) for mode, node, _ in got] == [
        ("values", None),
        ("updates", "b"),
        ("values", None),
    ]
    assert got[0][2].trail == ["given"] and got[0][2].x == 3
    assert got[2][2].trail == ["given", "b@3"]


def test_the_input_step_keeps_the_pause_for_a_run_stopped_before_going_on() -> None:
    """The Command's checkpoint carries the paused step: a crash right after it loses nothing."""
    app = build(MemoryCheckpointer())
    app.invoke(Command(goto="ask"), thread_id="p")
    stop = threading.Event()
    stop.set()  # the run stores its input step, then starts no step

    app.invoke(Command(update={"x": 4}, goto="c"), thread_id="p", stop=stop)
    state = app.get_state("p")
    done = app.invoke(Command(resume="late"), thread_id="p")

    assert state.metadata["source"] == "input" and state.next == ("ask", "c")
    assert [i.value for i in state.interrupts] == ["approve?"]
    assert done.trail == ["ask:late@4", "c@4"]


def test_goto_to_a_node_already_pending_runs_it_once() -> None:
    app = build(MemoryCheckpointer())
    app.invoke(Command(goto="ask"), thread_id="p")

    out = app.invoke(Command(resume="yes", goto="ask"), thread_id="p")

    assert out.trail == ["ask:yes@0"]
