"""The write path's rules no other test pins: Send arguments, deferred nodes beside joins,
and once() inside a subgraph whose node is retried."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from flowgraph import END, START, Command, RetryPolicy, Send, StateGraph, once
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.errors import SerializationError


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


class Opaque:
    """A value the checkpoint codec does not know."""


# -- a Send whose argument cannot be stored ---------------------------------------------


def _work(arg: dict[str, Any]) -> dict[str, Any]:
    return {"log": [f"work:{arg['x']}"]}


def test_an_unsavable_send_argument_from_a_conditional_edge_names_the_nodes_and_path(
    tmp_path: Path,
) -> None:
    g = StateGraph(Log)
    g.add_node("plan", lambda s: {"log": ["plan"]})
    g.add_node("work", _work)
    g.add_edge(START, "plan")
    g.add_conditional_edges(
        "plan", lambda s: [Send("work", {"x": 1}), Send("work", {"x": [0, Opaque()]})]
    )
    g.add_edge("work", END)
    app = g.compile(checkpointer=SQLiteCheckpointer(tmp_path / "send.db"))
    with pytest.raises(SerializationError) as refused:
        app.invoke({"log": []}, thread_id="t")
    error = refused.value
    assert isinstance(error, TypeError)  # what a caller of the codec already catches
    assert error.path == "Send[1].arg.x[1]"
    assert error.type_name.endswith("Opaque")
    message = str(error)
    assert message.startswith(
        "A Send to node 'work' from node 'plan' carries an argument that cannot be "
        "checkpointed, at Send[1].arg.x[1]."
    )
    assert "serde.register" in message  # the codec's advice stays
    # the step was not stored: the thread still waits to run 'plan'
    assert app.get_state("t").next == ("plan",)
    assert app.get_state("t").values["log"] == []


def test_an_unsavable_send_argument_from_start_names_the_input(tmp_path: Path) -> None:
    g = StateGraph(Log)
    g.add_node("work", _work)
    g.add_conditional_edges(START, lambda s: [Send("work", Opaque())])
    g.add_edge("work", END)
    app = g.compile(checkpointer=SQLiteCheckpointer(tmp_path / "start.db"))
    with pytest.raises(SerializationError) as refused:
        app.invoke({"log": ["in"]}, thread_id="t")
    assert refused.value.path == "Send[0].arg"
    assert str(refused.value).startswith(
        "A Send to node 'work' from the input's conditional edge from START carries an "
        "argument that cannot be checkpointed, at Send[0].arg."
    )
    assert app.get_state("t").checkpoint_id is None  # not even the input was stored


def test_an_unsavable_send_in_a_finished_tasks_command_names_its_node(tmp_path: Path) -> None:
    """A sibling failed: the finished task's Command is kept as a pending write, and its
    Send's argument is what cannot be stored."""

    def fails(state: Log) -> dict[str, Any]:
        raise RuntimeError("sibling failed")

    g = StateGraph(Log)
    g.add_node(
        "plan",
        lambda s: Command(goto=[Send("work", {"x": Opaque()})], update={"log": ["plan"]}),
        destinations=("work",),
    )
    g.add_node("sibling", fails)
    g.add_node("work", _work)
    g.add_edge(START, "plan")
    g.add_edge(START, "sibling")
    g.add_edge("work", END)
    app = g.compile(checkpointer=SQLiteCheckpointer(tmp_path / "pending.db"))
    with pytest.raises(SerializationError) as refused:
        app.invoke({"log": []}, thread_id="t")
    assert refused.value.path == "Send[0].arg.x"
    assert str(refused.value).startswith(
        "A Send to node 'work' from node 'plan' carries an argument that cannot be checkpointed"
    )


def test_a_savable_send_argument_is_checkpointed_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "ok.db"
    g = StateGraph(Log)
    g.add_node("plan", lambda s: {"log": ["plan"]})
    g.add_node("work", _work)
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", lambda s: [Send("work", {"x": n}) for n in (1, 2)])
    g.add_edge("work", END)
    app = g.compile(checkpointer=SQLiteCheckpointer(path), interrupt_before=["work"])
    app.invoke({"log": []}, thread_id="t")
    fresh = g.compile(checkpointer=SQLiteCheckpointer(path))  # as another process would
    assert fresh.get_state("t").next == ("work", "work")
    assert fresh.invoke(None, thread_id="t")["log"] == ["plan", "work:1", "work:2"]


# -- a deferred node beside a join edge -------------------------------------------------


def _deferred_beside_join() -> StateGraph:
    """x triggers the deferred d at once; the join [a, b] -> c completes two steps later."""
    g = StateGraph(Log)
    for name in ("x", "a", "b", "c"):
        g.add_node(name, lambda s, name=name: {"log": [name]})
    g.add_node("d", lambda s: {"log": [f"d after {s['log'][-1]}"]}, defer=True)
    g.add_edge(START, "x")
    g.add_edge("x", "a")
    g.add_edge("x", "d")
    g.add_edge("a", "b")
    g.add_edge(["a", "b"], "c")
    g.add_edge("c", END)
    g.add_edge("d", END)
    return g


def test_a_deferred_node_waiting_while_a_join_fills_runs_last() -> None:
    app = _deferred_beside_join().compile()
    assert app.invoke({"log": []})["log"] == ["x", "a", "b", "c", "d after c"]


def test_a_deferred_node_and_a_join_wait_across_a_checkpoint(tmp_path: Path) -> None:
    """Both are in the step's `joins`: a run stopped between them resumes with both."""
    path = tmp_path / "joins.db"
    g = _deferred_beside_join()
    app = g.compile(checkpointer=SQLiteCheckpointer(path), interrupt_before=["b"])
    assert app.invoke({"log": []}, thread_id="t")["log"] == ["x", "a"]
    fresh = g.compile(checkpointer=SQLiteCheckpointer(path))
    assert fresh.invoke(None, thread_id="t")["log"] == ["x", "a", "b", "c", "d after c"]


# -- once() in a subgraph whose node is retried ------------------------------------------


@pytest.mark.parametrize("fails_in", ["first", "second"])
def test_once_in_a_subgraph_does_not_run_again_when_its_node_is_retried(fails_in: str) -> None:
    """Without a checkpointer, once() results hold across the retries of one run (README,
    "Exactly once"); inside a subgraph the keys are its node's, so a retry of the node
    that runs the subgraph gets the result back."""
    charged: list[int] = []
    failures: list[str] = []

    def charge() -> str:
        charged.append(1)
        return f"receipt-{len(charged)}"

    def first(state: Log) -> dict[str, Any]:
        receipt = once("charge", charge)
        if fails_in == "first" and not failures:
            failures.append("first")
            raise ConnectionError("lost the connection after charging")
        return {"log": [receipt]}

    def second(state: Log) -> dict[str, Any]:
        if fails_in == "second" and not failures:
            failures.append("second")
            raise ConnectionError("lost the connection")
        return {"log": ["mailed"]}

    sub = StateGraph(Log)
    sub.add_node("first", first)
    sub.add_node("second", second)
    sub.add_edge(START, "first")
    sub.add_edge("first", "second")
    sub.add_edge("second", END)
    g = StateGraph(Log)
    g.add_node("checkout", sub.compile(), retry=RetryPolicy(max_attempts=2, initial_interval=0))
    g.add_edge(START, "checkout")
    g.add_edge("checkout", END)
    assert g.compile().invoke({"log": []})["log"] == ["receipt-1", "mailed"]
    assert failures == [fails_in]  # the node was retried once
    assert charged == [1]
