"""An input the thread already holds is a redelivery, not a new turn (issue #28).

Workers that read a thread's state, decide to send turn k (with its own
message id) and race each other must make one turn k between them. The
race itself, with every window of the protocol held open, is in
tests/checkpoint/test_race_windows.py; these pin the rule on one thread.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import Field

from flowgraph import END, START, AIMessage, HumanMessage, MessagesState, StateGraph
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer


class Chat(MessagesState):
    log: Annotated[list[str], operator.add] = Field(default_factory=list)


def echo_app(store: Any, runs: list[str]) -> Any:
    def answer(state: Chat) -> dict[str, Any]:
        runs.append(state.messages[-1].text)
        return {"messages": [AIMessage(f"echo {state.messages[-1].text}")]}

    g = StateGraph(Chat)
    g.add_node("answer", answer)
    g.add_edge(START, "answer")
    g.add_edge("answer", END)
    return g.compile(checkpointer=store)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    return MemoryCheckpointer() if request.param == "memory" else SQLiteCheckpointer(tmp_path / "c")


def texts(app: Any, thread: str) -> list[str]:
    return [m.text for m in app.get_state(thread).values.messages]


def test_the_same_message_sent_again_runs_no_second_turn(store: Any) -> None:
    runs: list[str] = []
    app = echo_app(store, runs)
    app.invoke({"messages": [HumanMessage("hi", id="u0")]}, thread_id="t")
    head = app.get_state("t").checkpoint_id
    again = app.invoke({"messages": [HumanMessage("hi", id="u0")]}, thread_id="t")
    assert runs == ["hi"]
    assert [m.text for m in again.messages] == ["hi", "echo hi"]
    assert app.get_state("t").checkpoint_id == head  # nothing was written


def test_a_redelivery_of_an_unfinished_turn_finishes_it(store: Any) -> None:
    runs: list[str] = []
    app = echo_app(store, runs)
    app.invoke(
        {"messages": [HumanMessage("hi", id="u0")]}, thread_id="t", interrupt_before=["answer"]
    )
    assert app.get_state("t").next == ("answer",)
    app.invoke({"messages": [HumanMessage("hi", id="u0")]}, thread_id="t")
    assert runs == ["hi"]
    assert texts(app, "t") == ["hi", "echo hi"]


def test_an_edit_with_the_same_id_applies_and_runs(store: Any) -> None:
    runs: list[str] = []
    app = echo_app(store, runs)
    app.invoke({"messages": [HumanMessage("hi", id="u0")]}, thread_id="t")
    app.invoke({"messages": [HumanMessage("hello", id="u0")]}, thread_id="t")
    # replaced in place, as add_messages does, and the turn runs on the edited thread
    assert runs == ["hi", "echo hi"]
    assert texts(app, "t") == ["hello", "echo hi", "echo echo hi"]


@pytest.mark.parametrize(
    "second",
    [
        {"messages": [HumanMessage("hi")]},  # no id of its own: a new message each time
        {"messages": [("user", "hi")]},
        {"messages": [HumanMessage("hi", id="u0")], "log": ["again"]},  # more than messages
        {"messages": [HumanMessage("hi", id="u0"), HumanMessage("more", id="u1")]},
    ],
    ids=["no-id", "tuple", "with-other-field", "one-new-message"],
)
def test_an_input_with_anything_new_is_a_new_turn(store: Any, second: dict[str, Any]) -> None:
    runs: list[str] = []
    app = echo_app(store, runs)
    app.invoke({"messages": [HumanMessage("hi", id="u0")]}, thread_id="t")
    app.invoke(second, thread_id="t")
    assert len(runs) == 2


def test_a_fork_from_before_the_message_takes_it_as_new(store: Any) -> None:
    runs: list[str] = []
    app = echo_app(store, runs)
    app.invoke({"messages": [HumanMessage("hi", id="u0")]}, thread_id="t")
    first = app.get_state("t").checkpoint_id
    app.invoke({"messages": [HumanMessage("next", id="u1")]}, thread_id="t")
    app.invoke({"messages": [HumanMessage("next", id="u1")]}, thread_id="t", checkpoint_id=first)
    assert runs == ["hi", "next", "next"]  # the fork's state did not hold u1
