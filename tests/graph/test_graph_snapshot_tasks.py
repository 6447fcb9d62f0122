"""`get_state(...).tasks`: the next step's tasks as LangGraph's PregelTask items."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from flowgraph import START, Command, Send, StateGraph, interrupt
from flowgraph.checkpoint import MemoryCheckpointer, SQLiteCheckpointer


class State(TypedDict):
    v: str
    log: Annotated[list[str], operator.add]


def _failing_graph(checkpointer: Any, fail: list[bool]) -> Any:
    def boom(state: State) -> dict[str, Any]:
        if fail:
            raise ValueError("bad")
        return {"v": "fixed"}

    g = StateGraph(State)
    g.add_node("boom", boom)
    g.add_node("other", lambda s: {"log": ["other ran"]})
    g.add_edge(START, "boom").add_edge(START, "other")
    return g.compile(checkpointer=checkpointer)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_failed_task_shows_its_error_and_its_sibling_its_result(
    store: str, tmp_path: Path
) -> None:
    saver = MemoryCheckpointer() if store == "memory" else SQLiteCheckpointer(tmp_path / "t.db")
    fail = [True]
    app = _failing_graph(saver, fail)
    with pytest.raises(ValueError, match="bad"):
        app.invoke({"v": ""}, thread_id="t")
    snapshot = app.get_state("t")
    assert [(t.name, t.error, t.result, t.interrupts) for t in snapshot.tasks] == [
        ("boom", "ValueError('bad')", None, ()),
        ("other", None, {"log": ["other ran"]}, ()),
    ]
    assert snapshot.next == ("boom", "other")
    fail.clear()
    out = app.invoke(None, thread_id="t")  # the resume reuses other's writes
    assert out == {"v": "fixed", "log": ["other ran"]}
    assert app.get_state("t").tasks == ()


def test_task_ids_paths_and_a_subgraph_s_config() -> None:
    def ask(state: State) -> dict[str, Any]:
        return {"v": interrupt("value?")}

    inner = StateGraph(State)
    inner.add_node("ask", ask)
    inner.add_edge(START, "ask")
    g = StateGraph(State)
    g.add_node("team", inner.compile())
    g.add_node("work", lambda arg: {"log": [arg["x"]]})
    g.add_conditional_edges(
        START, lambda s: [Send("work", {"x": "a"}), Send("work", {"x": "b"}), "team"]
    )
    app = g.compile(checkpointer=MemoryCheckpointer())
    namespaces = [ns for ns, _ in app.stream({"v": ""}, thread_id="t", subgraphs=True) if ns]
    tasks = app.get_state("t").tasks
    assert [(t.name, t.path) for t in tasks] == [
        ("work", ("__pregel_push", 0, False)),
        ("work", ("__pregel_push", 1, False)),
        ("team", ("__pregel_pull", "team")),
    ]
    assert [t.result for t in tasks] == [{"log": ["a"]}, {"log": ["b"]}, None]
    team = tasks[2]
    # the id is the one the subgraph's stream namespace carries, and its interrupt's
    assert namespaces[0] == (f"team:{team.id}",)
    assert team.state == {"configurable": {"thread_id": "t", "checkpoint_ns": f"team:{team.id}"}}
    assert [i.value for i in team.interrupts] == ["value?"]
    assert team.interrupts[0].id.startswith(team.id)
    assert len({t.id for t in tasks}) == 3
    assert app.get_state("t").tasks == tasks  # deterministic
    app.invoke(Command(resume="x"), thread_id="t")
    assert app.get_state("t").tasks == ()


def test_a_breakpoint_s_tasks_have_nothing_yet() -> None:
    g = StateGraph(State)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "a").add_edge("a", "b")
    app = g.compile(checkpointer=MemoryCheckpointer(), interrupt_before=["b"])
    app.invoke({"v": ""}, thread_id="t")
    (task,) = app.get_state("t").tasks
    assert (task.name, task.error, task.interrupts, task.result, task.state) == (
        "b",
        None,
        (),
        None,
        None,
    )


def test_get_state_takes_langgraphs_subgraphs_keyword() -> None:
    class Counter(TypedDict):
        n: int

    g = StateGraph(Counter)
    g.add_node("add", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "add")
    app = g.compile(checkpointer=MemoryCheckpointer())
    config = {"configurable": {"thread_id": "sub"}}
    app.invoke({"n": 1}, config)
    assert app.get_state(config, subgraphs=True) == app.get_state(config)
    assert app.get_state(config, subgraphs=True).values == {"n": 2}
