"""SQLite file layout: a new file's schema, the migration of older files, newer files refused.

A schema-1 or schema-2 file is built with that schema's own DDL and filled
with rows that a real graph run wrote, so the migrated file must give back
exactly what the original store gives: records, chains, messages, pending
writes and the graph's state, and go on from the same head.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from flowgraph import END, START, AIMessage, HumanMessage, MessagesState, StateGraph
from flowgraph.checkpoint.base import (
    BaseCheckpointer,
    CheckpointRecord,
    PendingWrite,
    new_checkpoint_id,
)
from flowgraph.checkpoint.sqlite import PAGE_SIZE, SCHEMA_VERSION, SQLiteCheckpointer
from flowgraph.errors import ConcurrentRunError, DeserializationError

V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    thread_id TEXT PRIMARY KEY,
    head TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    parent_id TEXT,
    step INTEGER NOT NULL,
    created_at REAL NOT NULL,
    base_id TEXT NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_id)
);
CREATE INDEX IF NOT EXISTS checkpoints_by_step ON checkpoints (thread_id, step);
CREATE TABLE IF NOT EXISTS messages (
    thread_id TEXT NOT NULL,
    key TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (thread_id, key)
);
CREATE TABLE IF NOT EXISTS pending (
    thread_id TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    task_index INTEGER NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_id, task_index)
);
"""
"""Schema 1 exactly as flowgraph wrote it (user_version 1)."""
V2_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
        thread_id TEXT PRIMARY KEY,
        head TEXT NOT NULL,
        updated_at REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        parent_id TEXT,
        step INTEGER NOT NULL,
        created_at REAL NOT NULL,
        base_id TEXT NOT NULL,
        payload BLOB NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS messages (
        thread_id TEXT NOT NULL,
        key TEXT NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (thread_id, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending (
        thread_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        task_index INTEGER NOT NULL,
        payload BLOB NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_id, task_index)
) WITHOUT ROWID;
"""
"""Schema 2 exactly as flowgraph wrote it (user_version 2): each step rewrote `threads.head`."""
OLD_SCHEMAS = {1: V1_SCHEMA, 2: V2_SCHEMA}
TABLES = ("threads", "checkpoints", "messages", "pending")


def chat(store: BaseCheckpointer) -> Any:
    """One node answering each user message with a numbered reply."""

    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"reply {len(state.messages)} " + "x" * 300)]}

    g = StateGraph(MessagesState)
    g.add_node("reply", reply)
    g.add_edge(START, "reply")
    g.add_edge("reply", END)
    return g.compile(checkpointer=store)


def fill(store: BaseCheckpointer) -> None:
    """Two threads of a few turns, and pending writes against one head."""
    app = chat(store)
    for thread_id, turns in (("alpha", 12), ("beta", 3)):
        for turn in range(turns):
            app.invoke({"messages": [HumanMessage(f"question {turn}")]}, thread_id=thread_id)
    head = store.head("beta")
    assert head is not None
    store.put_pending(
        "beta", head, [PendingWrite(task_index=i, payload=b"w%d" % i) for i in (0, 2)]
    )


def old_copy(source: Path, target: Path, version: int) -> None:
    """A file of schema `version` holding every row of `source`, each thread's head in its row."""
    with SQLiteCheckpointer(source) as store:
        heads = {t: store.head(t) for t in store.threads()}
    with contextlib.closing(sqlite3.connect(target)) as db:
        db.executescript(OLD_SCHEMAS[version])
        db.execute(f"PRAGMA user_version = {version}")
        db.execute("ATTACH DATABASE ? AS src", (str(source),))
        with db:
            for table in TABLES[1:]:
                db.execute(f"INSERT INTO main.{table} SELECT * FROM src.{table}")
            db.executemany(
                "INSERT INTO main.threads (thread_id, head, updated_at) VALUES (?, ?, 1.7e9)",
                heads.items(),
            )
        db.execute("DETACH DATABASE src")


def snapshot(store: BaseCheckpointer, path: Path) -> dict[str, Any]:
    """Everything the protocol can read back from a store."""
    seen: dict[str, Any] = {"threads": store.threads()}
    for thread_id in seen["threads"]:
        head = store.head(thread_id)
        assert head is not None
        records = store.history(thread_id)
        with contextlib.closing(sqlite3.connect(path)) as db:
            keys = [
                k
                for (k,) in db.execute("SELECT key FROM messages WHERE thread_id = ?", (thread_id,))
            ]
        seen[thread_id] = {
            "head": head,
            "history": records,
            "chains": [store.chain(thread_id, r.checkpoint_id) for r in records],
            "messages": store.messages(thread_id, keys),
            "pending": store.pending(thread_id, head),
        }
    return seen


def sql(path: Path, query: str) -> list[Any]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return db.execute(query).fetchall()


@pytest.fixture
def original(tmp_path: Path) -> Path:
    path = tmp_path / "original.db"
    with SQLiteCheckpointer(path) as store:
        fill(store)
    return path


def test_a_new_file_has_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    SQLiteCheckpointer(path).close()
    assert sql(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    # set before WAL mode creates the file, or SQLite keeps its default of 4096
    assert PAGE_SIZE != 4096
    assert sql(path, "PRAGMA page_size") == [(PAGE_SIZE,)]
    assert sql(path, "PRAGMA journal_mode") == [("wal",)]
    tables = dict(sql(path, "SELECT name, sql FROM sqlite_schema WHERE type = 'table'"))
    assert sorted(tables) == sorted([*TABLES, "leases"])
    # a step leaves its thread's row alone: the head is the newest id unless the row names it
    assert [r[1:4] for r in sql(path, "PRAGMA table_info(threads)")] == [
        ("thread_id", "TEXT", 1),  # a WITHOUT ROWID key is NOT NULL
        ("head", "TEXT", 0),
    ]
    for clustered in ("threads", "messages", "pending", "leases"):
        assert tables[clustered].endswith("WITHOUT ROWID")
    assert not tables["checkpoints"].endswith("WITHOUT ROWID")
    # no index but the primary key's: chain() walks parent links
    assert sql(path, "SELECT name FROM sqlite_schema WHERE type = 'index'") == [
        ("sqlite_autoindex_checkpoints_1",)
    ]


@pytest.mark.parametrize("version", [1, 2])
def test_an_older_file_is_migrated_on_open_with_every_row_kept(
    original: Path, tmp_path: Path, version: int
) -> None:
    old = tmp_path / f"v{version}.db"
    old_copy(original, old, version)
    counts = {t: sql(old, f"SELECT count(*) FROM {t}")[0][0] for t in TABLES}
    assert counts == {"threads": 2, "checkpoints": 30, "messages": 30, "pending": 2}

    with SQLiteCheckpointer(original) as store:
        expected = snapshot(store, original)
    with SQLiteCheckpointer(old) as store:
        assert snapshot(store, old) == expected

    assert sql(old, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert {t: sql(old, f"SELECT count(*) FROM {t}")[0][0] for t in TABLES} == counts
    names = [n for (n,) in sql(old, "SELECT name FROM sqlite_schema ORDER BY name")]
    assert names == [
        "checkpoints",
        "leases",
        "messages",
        "pending",
        "sqlite_autoindex_checkpoints_1",
        "threads",
    ]
    assert sql(old, "PRAGMA integrity_check") == [("ok",)]
    assert sql(old, "PRAGMA page_size") == [(4096,)]  # an existing file keeps its page size
    # every head was its thread's newest id: no row names one any more
    assert sql(old, "SELECT thread_id, head FROM threads") == [("alpha", None), ("beta", None)]


@pytest.mark.parametrize("version", [1, 2])
def test_a_migrated_thread_resumes_where_it_stopped(
    original: Path, tmp_path: Path, version: int
) -> None:
    old = tmp_path / f"v{version}.db"
    old_copy(original, old, version)
    with SQLiteCheckpointer(original) as store:
        before = chat(store).get_state("alpha")
    with SQLiteCheckpointer(old) as store:
        app = chat(store)
        state = app.get_state("alpha")
        assert state.values == before.values
        assert state.checkpoint_id == before.checkpoint_id
        assert len(state.values.messages) == 24
        after = app.invoke({"messages": [HumanMessage("one more")]}, thread_id="alpha")
        assert [m.text for m in after.messages[-2:]] == ["one more", "reply 25 " + "x" * 300]
        newest = store.history("alpha", limit=3)  # the turn's input, its step, the old head
        assert [r.checkpoint_id for r in newest[1:]] == [newest[0].parent_id, before.checkpoint_id]
        assert newest[1].parent_id == before.checkpoint_id
        # the pending writes of beta's head are cleared by the next put, as before
        head = store.head("beta")
        assert head is not None and len(store.pending("beta", head)) == 2
        child = CheckpointRecord(
            thread_id="beta", checkpoint_id=new_checkpoint_id(), parent_id=head, step=9,
            created_at=1.0, base_id=head, payload=b"child",
        )  # fmt: skip
        store.put(child, expected_head=head, messages={})
        assert store.pending("beta", head) == []
        assert store.chain("beta", child.checkpoint_id)[-2:] == [store.get("beta", head), child]


def test_two_openers_of_one_schema_1_file_migrate_it_once(original: Path, tmp_path: Path) -> None:
    old = tmp_path / "v1.db"
    old_copy(original, old, 1)
    with SQLiteCheckpointer(original) as store:
        expected = snapshot(store, original)
    start = threading.Barrier(4)
    seen: list[dict[str, Any]] = []
    errors: list[BaseException] = []

    def open_and_read() -> None:
        try:
            start.wait()
            with SQLiteCheckpointer(old) as store:
                seen.append(snapshot(store, old))
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    workers = [threading.Thread(target=open_and_read) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert seen == [expected] * 4


def test_a_file_of_a_newer_schema_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE threads (thread_id TEXT PRIMARY KEY, head TEXT, extra BLOB)")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(DeserializationError, match=r"newer flowgraph.*upgrade flowgraph") as err:
        SQLiteCheckpointer(path)
    assert str(path) in str(err.value)
    assert sql(path, "PRAGMA user_version") == [(SCHEMA_VERSION + 1,)]
    assert [n for (n,) in sql(path, "SELECT name FROM sqlite_schema WHERE type = 'table'")] == [
        "threads"
    ]


def test_a_damaged_parent_link_in_a_chain_is_a_clear_error(original: Path) -> None:
    with SQLiteCheckpointer(original) as store:
        records = store.history("alpha")
        middle = next(r for r in records if r.checkpoint_id != r.base_id)
        with contextlib.closing(sqlite3.connect(original)) as db, db:
            db.execute(
                "DELETE FROM checkpoints WHERE thread_id = 'alpha' AND checkpoint_id = ?",
                (middle.parent_id,),
            )
        with pytest.raises(DeserializationError, match="lost its parent"):
            store.chain("alpha", middle.checkpoint_id)


def test_parent_links_that_loop_are_a_clear_error_not_a_hang(original: Path) -> None:
    with SQLiteCheckpointer(original) as store:
        records = store.history("alpha")
        child = next(r for r in records if r.base_id not in (r.checkpoint_id, r.parent_id))
        with contextlib.closing(sqlite3.connect(original)) as db, db:
            # the parent now points back at its child: the walk to the snapshot never ends
            db.execute(
                "UPDATE checkpoints SET parent_id = ?, base_id = ? "
                "WHERE thread_id = 'alpha' AND checkpoint_id = ?",
                (child.checkpoint_id, child.base_id, child.parent_id),
            )
        with pytest.raises(DeserializationError, match="form a loop"):
            store.chain("alpha", child.checkpoint_id)


OPENERS = 8
TRIALS = 30
"""Before openers waited out the WAL switch, about one trial in ten failed."""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_processes_opening_a_fresh_file_together_all_get_in(tmp_path: Path) -> None:
    for trial in range(TRIALS):
        path = tmp_path / f"fresh-{trial}.db"
        go = tmp_path / f"go-{trial}"
        children = []
        for _ in range(OPENERS):
            pid = os.fork()
            if pid == 0:  # the child: open the file at the same moment as its siblings
                code = 1
                try:
                    while not go.exists():
                        time.sleep(0.001)
                    with SQLiteCheckpointer(path) as store:
                        code = 0 if store.head("nobody") is None else 2
                finally:
                    os._exit(code)
            children.append(pid)
        go.touch()
        codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
        assert codes == [0] * OPENERS, (trial, codes)
        assert sql(path, "PRAGMA journal_mode") == [("wal",)]
        assert sql(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]


# -- the head: the newest id, or the one its thread's row names ------------------------------


def put_after(
    store: BaseCheckpointer, parent: CheckpointRecord, checkpoint_id: str, expected: str
) -> CheckpointRecord:
    """A child of `parent` under a given id, stored with `expected` as the thread's head."""
    child = CheckpointRecord(
        thread_id=parent.thread_id, checkpoint_id=checkpoint_id,
        parent_id=parent.checkpoint_id, step=parent.step + 1, created_at=1.0,
        base_id=parent.base_id, payload=checkpoint_id.encode(),
    )  # fmt: skip
    store.put(child, expected_head=expected, messages={})
    return child


def named_heads(path: Path) -> list[Any]:
    return sql(path, "SELECT thread_id, head FROM threads ORDER BY thread_id")


def test_an_id_from_a_slower_clock_is_named_until_a_later_id_sorts_last(tmp_path: Path) -> None:
    path = tmp_path / "clocks.db"
    early, middle, late, later = (new_checkpoint_id() for _ in range(4))
    with SQLiteCheckpointer(path) as store:
        root = CheckpointRecord(
            thread_id="t", checkpoint_id=late, parent_id=None, step=0, created_at=1.0,
            base_id=late, payload=b"root",
        )  # fmt: skip
        store.put(root, expected_head=None, messages={})
        assert named_heads(path) == [("t", None)]
        # a process whose clock is behind: its ids sort before the head's
        one = put_after(store, root, early, late)
        assert store.head("t") == early
        assert named_heads(path) == [("t", early)]
        two = put_after(store, one, middle, early)
        assert store.head("t") == middle
        assert named_heads(path) == [("t", middle)]
        # the newest id is not the head: expecting it loses, as expecting an older head does
        for stale in (late, early):
            with pytest.raises(ConcurrentRunError):
                put_after(store, root, new_checkpoint_id(), stale)
        assert store.head("t") == middle
        # an id sorting after every other one is the head again without a name
        three = put_after(store, two, later, middle)
        assert store.head("t") == later
        assert named_heads(path) == [("t", None)]
        assert [r.checkpoint_id for r in store.chain("t", later)] == [late, early, middle, later]
        four = put_after(store, three, new_checkpoint_id(), later)
        assert store.head("t") == four.checkpoint_id
        assert named_heads(path) == [("t", None)]


def test_prune_keeps_a_named_head_and_drops_the_branch_holding_the_newest_id(
    tmp_path: Path,
) -> None:
    path = tmp_path / "prune.db"
    early, late, fork = sorted(new_checkpoint_id() for _ in range(3))
    with SQLiteCheckpointer(path) as store:
        root = CheckpointRecord(
            thread_id="t", checkpoint_id=early, parent_id=None, step=0, created_at=1.0,
            base_id=early, payload=b"root",
        )  # fmt: skip
        store.put(root, expected_head=None, messages={})
        branch = put_after(store, root, fork, early)  # the newest id, on a branch
        slow = put_after(store, root, late, fork)  # then a slower clock forks from the root
        assert store.head("t") == late
        assert store.prune("t", keep_last=2) == 1
        assert [r.checkpoint_id for r in store.history("t")] == [late, early]
        assert store.get("t", branch.checkpoint_id) is None
        assert store.head("t") == slow.checkpoint_id
        put_after(store, slow, new_checkpoint_id(), late)
        assert named_heads(path) == [("t", None)]


def test_a_schema_2_head_that_is_not_the_newest_id_stays_the_head(
    original: Path, tmp_path: Path
) -> None:
    with SQLiteCheckpointer(original) as store:
        records = store.history("alpha")
        head = records[0]
    old = tmp_path / "v2.db"
    old_copy(original, old, 2)
    # as a process with a slower clock left it: the head's id sorts before its parent's
    with contextlib.closing(sqlite3.connect(old)) as db, db:
        db.execute(
            "UPDATE threads SET head = ? WHERE thread_id = 'alpha'", (records[1].checkpoint_id,)
        )
        db.execute(
            "UPDATE checkpoints SET parent_id = ? WHERE thread_id = 'alpha' AND checkpoint_id = ?",
            (head.checkpoint_id, records[1].checkpoint_id),
        )
        db.execute(
            "UPDATE checkpoints SET parent_id = ? WHERE thread_id = 'alpha' AND checkpoint_id = ?",
            (records[2].checkpoint_id, head.checkpoint_id),
        )
    with SQLiteCheckpointer(old) as store:
        assert store.head("alpha") == records[1].checkpoint_id
        assert named_heads(old) == [("alpha", records[1].checkpoint_id), ("beta", None)]
        with pytest.raises(ConcurrentRunError):
            put_after(store, head, new_checkpoint_id(), head.checkpoint_id)
        child = put_after(store, records[1], new_checkpoint_id(), records[1].checkpoint_id)
        assert store.head("alpha") == child.checkpoint_id
        assert named_heads(old) == [("alpha", None), ("beta", None)]


def test_pending_writes_another_connection_left_are_cleared_by_the_next_step(
    tmp_path: Path,
) -> None:
    """`put` deletes pending writes only if its check finds some; the check sees every writer's."""
    path = tmp_path / "pending.db"
    with SQLiteCheckpointer(path) as runner, SQLiteCheckpointer(path) as other:
        root_id = new_checkpoint_id()
        root = CheckpointRecord(
            thread_id="t", checkpoint_id=root_id, parent_id=None, step=0, created_at=1.0,
            base_id=root_id, payload=b"root",
        )  # fmt: skip
        runner.put(root, expected_head=None, messages={})
        child = put_after(runner, root, new_checkpoint_id(), root_id)  # nothing to clear
        other.put_pending("t", child.checkpoint_id, [PendingWrite(task_index=1, payload=b"w")])
        assert runner.pending("t", child.checkpoint_id) == [
            PendingWrite(task_index=1, payload=b"w")
        ]
        grandchild = put_after(runner, child, new_checkpoint_id(), child.checkpoint_id)
        assert other.pending("t", child.checkpoint_id) == []
        assert sql(path, "SELECT count(*) FROM pending") == [(0,)]
        assert runner.head("t") == other.head("t") == grandchild.checkpoint_id
