"""SQLiteCheckpointer itself: closing its connections, and damaged rows seen through its API.

The protocol's behaviour is the conformance suite's; these are promises only
the SQLite store makes (one file, connections per thread, typed columns).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from flowgraph import END, START, AIMessage, HumanMessage, MessagesState, StateGraph
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.errors import DeserializationError


def chat_app(store: SQLiteCheckpointer) -> Any:
    g = StateGraph(MessagesState)
    g.add_node("reply", lambda s: {"messages": [AIMessage(f"reply {len(s.messages)}")]})
    g.add_edge(START, "reply").add_edge("reply", END)
    return g.compile(checkpointer=store)


def sidecars(path: Path) -> list[str]:
    """The -wal and -shm files next to the database, while any connection is open."""
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


def threads_in_the_file_alone(path: Path) -> list[str]:
    """The threads the database file holds by itself, reading no WAL (immutable=1)."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?immutable=1", uri=True)) as db:
        return [row[0] for row in db.execute("SELECT thread_id FROM threads ORDER BY 1")]


# -- close ----------------------------------------------------------------------------------


def test_close_closes_the_connections_of_every_thread_and_removes_the_wal(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    store = SQLiteCheckpointer(path)
    app = chat_app(store)
    app.invoke({"messages": [HumanMessage("main")]}, thread_id="main")
    holding = threading.Event()
    release = threading.Event()

    def worker(name: str, hold: bool) -> None:
        app.invoke({"messages": [HumanMessage(name)]}, thread_id=name)
        if hold:  # a thread still alive, its connection open, when close() runs
            holding.set()
            release.wait(10)

    workers = [threading.Thread(target=worker, args=(f"w{i}", i == 0)) for i in range(3)]
    for w in workers:
        w.start()
    assert holding.wait(10)
    for w in workers[1:]:
        w.join()
    asyncio.run(app.ainvoke({"messages": [HumanMessage("async")]}, thread_id="async"))
    assert sidecars(path) == ["c.db-shm", "c.db-wal"]
    try:
        store.close()
        assert sidecars(path) == []  # no connection is left: the last one checkpointed the WAL
        assert threads_in_the_file_alone(path) == ["async", "main", "w0", "w1", "w2"]
    finally:
        release.set()
        workers[0].join()


def test_a_closed_checkpointer_opens_new_connections_on_its_next_use(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = SQLiteCheckpointer(path)
    app = chat_app(store)
    app.invoke({"messages": [HumanMessage("one")]}, thread_id="t")
    store.close()
    out = app.invoke({"messages": [HumanMessage("two")]}, thread_id="t")
    assert [m.text for m in out.messages] == ["one", "reply 1", "two", "reply 3"]
    assert store.threads() == ["t"]
    with store:  # close() again at the end of the block
        assert len(store.history("t")) == 4
    assert sidecars(path) == []


# -- damaged rows ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        ("payload", "a text value", "has no binary payload"),
        ("payload", 12345, "has no binary payload"),
        ("step", "three", "has step 'three', not an integer"),
        ("step", 2.5, "has step 2.5, not an integer"),
        ("step", b"\x03", "has step b'\\x03', not an integer"),
        ("created_at", "yesterday", "has created_at 'yesterday', not a number"),
        ("created_at", b"\x00", "has created_at b'\\x00', not a number"),
    ],
    ids=[
        "payload-text",
        "payload-int",
        "step-text",
        "step-real",
        "step-blob",
        "created_at-text",
        "created_at-blob",
    ],
)
def test_reading_a_damaged_row_is_a_deserialization_error_naming_it(
    tmp_path: Path, column: str, value: object, problem: str
) -> None:
    """Seen through the store alone (get, history, chain), not only through a graph."""
    path = tmp_path / "c.db"
    store = SQLiteCheckpointer(path)
    app = chat_app(store)
    for t in ("bad", "good"):
        app.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)
    head = store.head("bad")
    assert head is not None
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(
            f"UPDATE checkpoints SET {column} = ? WHERE thread_id = 'bad' AND checkpoint_id = ?",
            (value, head),
        )
    for read in (
        lambda: store.get("bad", head),
        lambda: store.history("bad"),
        lambda: store.chain("bad", head),
    ):
        with pytest.raises(DeserializationError) as caught:
            read()
        assert f"Checkpoint {head!r} of thread 'bad' {problem}" in str(caught.value)
    good = store.head("good")
    assert good is not None and store.get("good", good) is not None
    store.close()


def test_a_forked_child_opens_its_own_connection_and_leaves_the_parents_open(
    tmp_path: Path,
) -> None:
    saver = SQLiteCheckpointer(tmp_path / "fork.sqlite")
    parent_db = saver._db()
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a connection of its own, then close() (only its own)
        try:
            ok = saver._db() is not parent_db
            saver.close()
            os.write(writer, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(writer)
    answer = os.read(reader, 1)
    os.waitpid(pid, 0)
    os.close(reader)
    assert answer == b"1"
    assert saver._db() is parent_db
    assert parent_db.execute("SELECT count(*) FROM checkpoints").fetchone() == (0,)
    saver.close()


def test_a_react_turn_commits_one_transaction_a_checkpoint_and_two_for_exactly_once(
    tmp_path: Path,
) -> None:
    """The write transactions of a turn of 2 tool rounds, as the README's Performance counts."""
    from flowgraph import ToolNode, tool, tools_condition

    @tool
    def lookup(q: str) -> str:
        """Look something up.

        Args:
            q: What to look up.
        """
        return f"found {q}"

    def model(state: MessagesState) -> dict[str, Any]:
        rounds = sum(1 for m in state.messages if m.type == "tool")
        if rounds < 2:
            call = {"id": f"c{rounds}", "name": "lookup", "args": {"q": str(rounds)}}
            return {"messages": [AIMessage("", tool_calls=[call])]}
        return {"messages": [AIMessage("done")]}

    store = SQLiteCheckpointer(tmp_path / "react.sqlite")
    g = StateGraph(MessagesState)
    g.add_node("model", model)
    g.add_node("tools", ToolNode([lookup]))
    g.add_edge(START, "model")
    g.add_conditional_edges("model", tools_condition)
    g.add_edge("tools", "model")
    app = g.compile(checkpointer=store)
    statements: list[str] = []
    store._db().set_trace_callback(statements.append)
    out = app.invoke({"messages": [HumanMessage("q")]}, thread_id="t")
    store._db().set_trace_callback(None)

    assert [m.type for m in out.messages] == ["human", "ai", "tool", "ai", "tool", "ai"]

    def count(start: str) -> int:
        return sum(statement.startswith(start) for statement in statements)

    def transactions() -> int:  # each BEGIN ... COMMIT, and each write outside one
        inside, made = False, 0
        for statement in statements:
            if statement.startswith("BEGIN"):
                inside, made = True, made + 1
            elif statement.startswith("COMMIT"):
                inside = False
            elif not inside and statement.startswith(("INSERT", "DELETE", "UPDATE")):
                made += 1
        return made

    assert transactions() == 8
    assert count("BEGIN IMMEDIATE") == count("COMMIT") == 6  # a `once` row is one statement
    assert count("INSERT INTO checkpoints") == 6  # the input's and one per superstep
    assert count("INSERT OR REPLACE INTO pending") == 2  # each call's result, as it returns
    assert count("INSERT INTO leases") == count("DELETE FROM leases") == 1
    # the lease is taken in the input's transaction (put_and_acquire) and given back in the
    # last step's (put_and_release), not in transactions of their own
    begins = [i for i, s in enumerate(statements) if s.startswith("BEGIN IMMEDIATE")]
    first, last = statements[begins[0] : begins[1]], statements[begins[-1] :]
    for transaction, lease in ((first, "INSERT INTO leases"), (last, "DELETE FROM leases")):
        assert transaction[-1] == "COMMIT"
        assert any(s.startswith("INSERT INTO checkpoints") for s in transaction)
        assert any(s.startswith(lease) for s in transaction)
    assert store.read_lease("t") is None
    store.close()
