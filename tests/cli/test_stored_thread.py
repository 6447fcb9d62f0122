"""The store-level reader the CLI uses, and `with_checkpointer`, checked in process."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, NotRequired

from pydantic import BaseModel
from typing_extensions import TypedDict

from flowgraph import END, START, AnyMessage, RemoveMessage, StateGraph, add_messages
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.graph import CompiledGraph
from flowgraph.graph._thread.reader import StoredThread


class State(BaseModel):
    chat: Annotated[list[AnyMessage], add_messages] = []
    log: Annotated[list[str], operator.add] = []
    tag: str = ""


def _app() -> CompiledGraph:
    def talk(state: State) -> dict[str, Any]:
        turn = len(state.log)
        update: dict[str, Any] = {
            "chat": [("ai", f"reply {turn}")],
            "log": [f"x#{turn:012x}"],
            "tag": "t",
        }
        if turn == 1:  # drop the first reply: a RemoveMessage write
            update["chat"].insert(0, RemoveMessage(state.chat[1].id))
        return update

    graph = StateGraph(State)
    graph.add_node("talk", talk)
    graph.add_edge(START, "talk")
    graph.add_edge("talk", END)
    return graph.compile()


def test_the_reader_rebuilds_every_checkpoint_like_the_app(tmp_path: Path) -> None:
    store = SQLiteCheckpointer(tmp_path / "s.db")
    app = _app().with_checkpointer(store)
    for prompt in ("one", "two", "three"):
        app.invoke({"chat": [("user", prompt)]}, thread_id="t")

    stored = StoredThread(store, "t")

    assert stored.message_fields == {"chat"}  # `log` holds look-alike keys, not messages
    # the reader lists the stored steps: the app's history without the derived
    # checkpoints before its inputs, each step with its stored parent
    by_app = list(app.get_state_history("t", before_inputs=False))
    by_store = stored.history()
    assert [s.checkpoint_id for s in by_store] == [s.checkpoint_id for s in by_app]
    for mine, theirs in zip(by_store, by_app, strict=True):
        assert mine.values["chat"] == theirs.values.chat
        assert (mine.step, mine.next, mine.metadata, mine.parent_id) == (
            theirs.step, theirs.next, theirs.metadata, theirs.parent_id
        )  # fmt: skip
    texts = [m.text for m in by_store[0].values["chat"]]
    assert texts == ["one", "two", "reply 1", "three", "reply 2"]
    assert by_store[0].values["tag"] == "t"


class Desk(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    topic: NotRequired[str]


def test_a_field_that_only_steps_since_the_snapshot_wrote_is_read_back(tmp_path: Path) -> None:
    """`topic` is in no snapshot (the thread's only one is its input), only in a step's
    delta, and holds no list: the reader still knows the field and its value."""

    def triage(state: Desk) -> dict[str, Any]:
        return {"topic": "orders", "messages": [("ai", "on it")]}

    graph = StateGraph(Desk)
    graph.add_node("triage", triage)
    graph.add_edge(START, "triage")
    graph.add_edge("triage", END)
    store = SQLiteCheckpointer(tmp_path / "d.db")
    graph.compile(checkpointer=store).invoke({"messages": [("user", "my order?")]}, thread_id="d")
    records = store.history("d")
    assert [r.base_id == r.checkpoint_id for r in records] == [False, True]  # delta, snapshot

    state = StoredThread(store, "d").state()

    assert state.values["topic"] == "orders"
    assert [m.text for m in state.values["messages"]] == ["my order?", "on it"]
    store.close()


def test_with_checkpointer_is_a_copy_on_another_store() -> None:
    app = _app()
    first, second = MemoryCheckpointer(), MemoryCheckpointer()
    a, b = app.with_checkpointer(first), app.with_checkpointer(second)

    a.invoke({"chat": [("user", "hi")]}, thread_id="x")

    assert app.checkpointer is None and a.checkpointer is first and b.checkpointer is second
    assert first.threads() == ["x"] and second.threads() == []
    assert b.get_state("x").checkpoint_id is None
    assert a.graph is app.graph  # the structure is shared
