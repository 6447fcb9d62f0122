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


# -- when a checkpoint is a snapshot ----------------------------------------------------


class Blob(TypedDict):
    blob: str


def _blob_app(store: SQLiteCheckpointer) -> Any:
    g = StateGraph(Blob)
    g.add_node("n", lambda s: {})
    g.add_edge(START, "n")
    g.add_edge("n", END)
    return g.compile(checkpointer=store)


def _oldest_first(store: SQLiteCheckpointer, thread_id: str) -> list[Any]:
    return list(reversed(list(store.history(thread_id))))


def test_a_snapshot_comes_when_the_deltas_since_the_last_reach_16_kb(tmp_path: Path) -> None:
    """Small state: its deltas add up to MIN_BYTES_BETWEEN_SNAPSHOTS before the next one."""
    store = SQLiteCheckpointer(tmp_path / "bytes.db")
    app = _blob_app(store)
    for n in range(80):
        app.update_state("t", {"blob": f"{n:03d}" + "x" * 500})
    records = _oldest_first(store, "t")
    is_snapshot = [r.base_id == r.checkpoint_id for r in records]
    assert is_snapshot[0] and is_snapshot.count(True) >= 3, is_snapshot
    runs: list[list[int]] = []  # the delta sizes after each snapshot
    for record, snap in zip(records, is_snapshot, strict=True):
        if snap:
            runs.append([])
        else:
            runs[-1].append(len(record.payload))
    for deltas in runs[:-1]:  # each run that a snapshot ended
        assert sum(deltas) < 16 * 1024 <= sum(deltas) + max(deltas), runs
    assert app.get_state("t").values["blob"] == "079" + "x" * 500
    fresh = _blob_app(SQLiteCheckpointer(tmp_path / "bytes.db"))  # replays the deltas
    assert fresh.get_state("t").values["blob"] == "079" + "x" * 500


def test_a_snapshot_comes_after_at_most_max_steps_deltas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big state whose steps write little: the step count bounds the replay."""
    from flowgraph.graph._thread import record

    monkeypatch.setattr(record, "MAX_STEPS_BETWEEN_SNAPSHOTS", 4)
    store = SQLiteCheckpointer(tmp_path / "steps.db")
    app = _blob_app(store)
    for n in range(14):
        app.update_state("t", {"blob": str(n)})
    kinds = "".join("S" if r.base_id == r.checkpoint_id else "d" for r in _oldest_first(store, "t"))
    assert kinds == "SddddSddddSddd"
    fresh = _blob_app(SQLiteCheckpointer(tmp_path / "steps.db"))
    assert fresh.get_state("t").values["blob"] == "13"


# -- the cursor's message keys ----------------------------------------------------------


def test_a_cursor_keeps_every_message_it_has_a_key_for_alive_once() -> None:
    """An id in `keys` must stay its message's: the cursor holds each message, once."""
    from flowgraph import HumanMessage
    from flowgraph.graph._thread.record import Cursor

    cursor = Cursor("t")
    first, second, known = HumanMessage("a", id="m1"), HumanMessage("b", id="m2"), HumanMessage("c")
    new: dict[str, bytes] = {}
    key = cursor.key_of(first, new)
    assert list(new) == [key] and key.startswith("m1#")
    assert cursor.key_of(first, new) == key  # staged: not encoded twice
    cursor.committed("c1")
    assert cursor.head == cursor.expected == "c1"
    assert [id(m) for m in cursor.held] == [id(first)] and cursor.staged_held == []
    later: dict[str, bytes] = {}
    assert cursor.keys_of([first, second], later)[0] == key
    cursor.committed("c2")
    assert [id(m) for m in cursor.held] == [id(first), id(second)]
    cursor.remember(known, "k#1")
    assert cursor.held[-1] is known and cursor.keys[id(known)] == "k#1"


# -- pending writes of the first layout ---------------------------------------------------


def test_a_pending_interrupt_of_the_first_layout_reads_back_with_its_answers() -> None:
    from flowgraph.checkpoint import serde
    from flowgraph.checkpoint.base import PendingWrite
    from flowgraph.checkpoint.memory import MemoryCheckpointer
    from flowgraph.graph._thread.record import load_pending

    store = MemoryCheckpointer()
    old = {"node": "ask", "interrupt": ["and your age?", "int-2"], "resumes": ["Ann", 41]}
    store.put_pending("t", "c1", [PendingWrite(task_index=3, payload=serde.dumps(old))])
    task = load_pending(store, "t", "c1")[3]
    assert task.node == "ask" and task.writes is None
    assert task.answers == {"i0": "Ann", "i1": 41}
    assert [(p.interrupt.value, p.interrupt.id, p.interrupt.node, p.key) for p in task.pauses] == [
        ("and your age?", "int-2", "ask", "i2")
    ]


# -- the thread cache -----------------------------------------------------------------


class CountingChain(SQLiteCheckpointer):
    """Counts the reads of a checkpoint's chain (what a cache miss costs)."""

    chains = 0

    def chain(self, thread_id: str, checkpoint_id: str) -> list[Any]:
        self.chains += 1
        return super().chain(thread_id, checkpoint_id)


def _log_app(store: SQLiteCheckpointer) -> Any:
    g = StateGraph(Log)
    g.add_node("n", lambda s: {"log": [f"turn {len(s['log'])}"]})
    g.add_edge(START, "n")
    g.add_edge("n", END)
    return g.compile(checkpointer=store)


def test_continuing_a_thread_this_app_wrote_reads_no_history(tmp_path: Path) -> None:
    store = CountingChain(tmp_path / "cache.db")
    app = _log_app(store)
    app.invoke({"log": ["a"]}, thread_id="t")
    store.chains = 0
    assert app.invoke({"log": ["b"]}, thread_id="t")["log"] == ["a", "turn 1", "b", "turn 3"]
    assert store.chains == 0  # the state came from the app's cache
    other = CountingChain(tmp_path / "cache.db")
    assert _log_app(other).get_state("t").values["log"] == ["a", "turn 1", "b", "turn 3"]
    assert other.chains == 1  # a fresh app replays it once


def test_a_cached_checkpoint_behind_the_head_is_written_against_the_real_head(
    tmp_path: Path,
) -> None:
    """Time travel from a checkpoint this app cached, after another app moved the head."""
    path = tmp_path / "moved.db"
    app = _log_app(SQLiteCheckpointer(path))
    app.invoke({"log": ["a"]}, thread_id="t")
    mine = app.get_state("t").checkpoint_id
    _log_app(SQLiteCheckpointer(path)).invoke({"log": ["b"]}, thread_id="t")  # another process
    branch = app.update_state("t", {"log": ["edit"]}, checkpoint_id=mine)
    state = app.get_state("t")
    assert state.checkpoint_id == branch and state.parent_id == mine
    assert state.values["log"] == ["a", "turn 1", "edit"]


def test_an_unsavable_default_of_the_state_schema_is_named_as_such(tmp_path: Path) -> None:
    """No write holds the value (the schema's default does): the error says so."""
    from pydantic import BaseModel, ConfigDict

    class WithDefault(BaseModel):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        n: int = 0
        thing: Any = Opaque()

    g = StateGraph(WithDefault)
    g.add_node("a", lambda s: {"n": 1})
    g.add_edge(START, "a")
    g.add_edge("a", END)
    app = g.compile(checkpointer=SQLiteCheckpointer(tmp_path / "default.db"))
    with pytest.raises(SerializationError) as refused:
        app.invoke({"n": 0}, thread_id="t")
    assert refused.value.path == "values.thing"
    assert str(refused.value).startswith(
        "The input (or a default of the state schema) put a value in the state that cannot "
        "be checkpointed: Cannot serialize "
    )
    assert app.get_state("t").checkpoint_id is None
