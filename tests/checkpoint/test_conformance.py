"""The checkpointer protocol, tested the same way on every backend (see conftest.BACKENDS).

These tests speak the protocol directly, with hand-made records and
payloads: the engine's encoding is not involved, so a failure here is the
backend's. A few tests at the end go through a compiled graph where the
protocol's contract is about what a user sees (corrupt rows).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from flowgraph import HumanMessage
from flowgraph.checkpoint.base import (
    BaseCheckpointer,
    CheckpointRecord,
    PendingWrite,
    new_checkpoint_id,
)
from flowgraph.errors import ConcurrentRunError, DeserializationError

from ._apps import chat_app
from .conftest import Backend, ForkServer, close_quietly

Tid = Callable[[str], str]


def record(
    thread_id: str,
    parent: CheckpointRecord | None = None,
    *,
    snapshot: bool = False,
    payload: bytes | None = None,
) -> CheckpointRecord:
    """A record after `parent` (a snapshot if asked or if it is the first)."""
    checkpoint_id = new_checkpoint_id()
    step = 0 if parent is None else parent.step + 1
    base = checkpoint_id if snapshot or parent is None else parent.base_id
    return CheckpointRecord(
        thread_id=thread_id,
        checkpoint_id=checkpoint_id,
        parent_id=None if parent is None else parent.checkpoint_id,
        step=step,
        created_at=1_700_000_000.0 + step,
        base_id=base,
        payload=payload if payload is not None else f"step {step} of {thread_id}".encode(),
    )


def extend(
    store: BaseCheckpointer,
    thread_id: str,
    n: int,
    *,
    after: CheckpointRecord | None = None,
    snapshot_every: int = 0,
    payload: bytes | None = None,
) -> list[CheckpointRecord]:
    """Put `n` records in a line after `after` (default: a new thread); returns them."""
    out = []
    parent = after
    for i in range(n):
        snap = parent is None or (snapshot_every > 0 and i % snapshot_every == 0)
        rec = record(thread_id, parent, snapshot=snap, payload=payload)
        store.put(
            rec,
            expected_head=store.head(thread_id),
            messages={f"m{rec.step}": f"message {rec.step}".encode()},
        )
        out.append(rec)
        parent = rec
    return out


def ids(records: Sequence[CheckpointRecord]) -> list[str]:
    return [r.checkpoint_id for r in records]


# -- put, get, head ------------------------------------------------------------------------


def test_put_then_get_and_head_round_trip(checkpointer: BaseCheckpointer, tid: Tid) -> None:
    t = tid("t")
    assert checkpointer.head(t) is None
    first = record(t, payload=b"\x00\xffbinary\x00")
    checkpointer.put(first, expected_head=None, messages={})
    second = record(t, first)
    checkpointer.put(second, expected_head=first.checkpoint_id, messages={})
    assert checkpointer.head(t) == second.checkpoint_id
    assert checkpointer.get(t, first.checkpoint_id) == first
    assert checkpointer.get(t, second.checkpoint_id) == second
    assert checkpointer.get(t, "no-such-id") is None
    assert checkpointer.get(tid("other"), first.checkpoint_id) is None


def test_checkpoint_ids_sort_by_creation() -> None:
    made = [new_checkpoint_id() for _ in range(2000)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)


def test_async_twins_give_the_same_answers(checkpointer: BaseCheckpointer, tid: Tid) -> None:
    t = tid("t")

    async def scenario() -> None:
        first = record(t)
        await checkpointer.aput(first, expected_head=None, messages={"k": b"v"})
        await checkpointer.aput_pending(
            t, first.checkpoint_id, [PendingWrite(task_index=0, payload=b"p")]
        )
        assert await checkpointer.ahead(t) == first.checkpoint_id
        assert await checkpointer.aget(t, first.checkpoint_id) == first
        assert await checkpointer.achain(t, first.checkpoint_id) == [first]
        assert await checkpointer.amessages(t, ["k", "x"]) == {"k": b"v"}
        assert await checkpointer.apending(t, first.checkpoint_id) == [
            PendingWrite(task_index=0, payload=b"p")
        ]

    asyncio.run(scenario())


def test_close_after_use_from_other_threads(
    request: pytest.FixtureRequest, backend: Backend, tid: Tid
) -> None:
    """The async twins (and any threaded app) open connections in worker threads."""
    store = backend.make()
    t = tid("t")
    worker = threading.Thread(target=extend, args=(store, t, 2))
    worker.start()
    worker.join()
    store.close()
    if backend.shared_store:
        with backend.make() as again:
            assert len(again.history(t)) == 2


# -- compare-and-set -----------------------------------------------------------------------


def test_put_with_a_stale_head_fails_naming_the_thread_and_stores_nothing(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    first, second = extend(checkpointer, t, 2)
    late = record(t, first)  # also a child of `first`, but `second` got there before it
    with pytest.raises(ConcurrentRunError) as caught:
        checkpointer.put(late, expected_head=first.checkpoint_id, messages={"late": b"x"})
    assert caught.value.thread_id == t
    assert t in str(caught.value)
    assert checkpointer.head(t) == second.checkpoint_id
    assert checkpointer.get(t, late.checkpoint_id) is None
    assert checkpointer.messages(t, ["late"]) == {}
    assert ids(checkpointer.history(t)) == ids([second, first])


def test_expecting_a_new_thread_fails_when_it_exists(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    (first,) = extend(checkpointer, t, 1)
    again = record(t)
    with pytest.raises(ConcurrentRunError) as caught:
        checkpointer.put(again, expected_head=None, messages={})
    assert caught.value.thread_id == t
    assert checkpointer.get(t, again.checkpoint_id) is None
    assert checkpointer.head(t) == first.checkpoint_id


def test_expecting_a_head_on_a_missing_thread_fails(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    with pytest.raises(ConcurrentRunError):
        checkpointer.put(record(t), expected_head="not-there", messages={})
    assert checkpointer.head(t) is None
    assert t not in checkpointer.threads()


# -- the message log -----------------------------------------------------------------------


def test_a_message_is_stored_once_and_never_overwritten(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    first = record(t)
    checkpointer.put(first, expected_head=None, messages={"a#1": b"first", "b#1": b"b"})
    second = record(t, first)
    checkpointer.put(
        second, expected_head=first.checkpoint_id, messages={"a#1": b"second", "c#1": b"c"}
    )
    assert checkpointer.messages(t, ["a#1", "b#1", "c#1", "zz#1"]) == {
        "a#1": b"first",
        "b#1": b"b",
        "c#1": b"c",
    }
    assert checkpointer.messages(tid("other"), ["a#1"]) == {}
    assert checkpointer.messages(t, []) == {}


def test_forget_messages_keeps_only_the_given_keys_of_that_thread(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t, other = tid("t"), tid("other")
    checkpointer.put(
        record(t), expected_head=None, messages={"a#1": b"a", "b#1": b"b", "c#1": b"c"}
    )
    checkpointer.put(record(other), expected_head=None, messages={"a#1": b"kept"})
    assert checkpointer.forget_messages(t, {"b#1"}) == 2
    assert checkpointer.messages(t, ["a#1", "b#1", "c#1"]) == {"b#1": b"b"}
    assert checkpointer.messages(other, ["a#1"]) == {"a#1": b"kept"}
    assert checkpointer.forget_messages(tid("missing"), set()) == 0


def test_many_message_keys_in_one_read(checkpointer: BaseCheckpointer, tid: Tid) -> None:
    t = tid("t")
    stored = {f"m{i}#h": f"data {i}".encode() for i in range(1500)}
    checkpointer.put(record(t), expected_head=None, messages=stored)
    assert checkpointer.messages(t, [*stored, "missing#h"]) == stored
    assert checkpointer.messages(t, iter(list(stored)[:3])) == dict(list(stored.items())[:3])


# -- history and chains --------------------------------------------------------------------


def test_history_is_newest_first_with_limit_and_before(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    made = extend(checkpointer, t, 6, snapshot_every=3)
    newest_first = list(reversed(made))
    assert checkpointer.history(t) == newest_first
    assert checkpointer.history(t, limit=2) == newest_first[:2]
    assert checkpointer.history(t, before=made[3].checkpoint_id) == newest_first[3:]
    assert checkpointer.history(t, before=made[3].checkpoint_id, limit=2) == newest_first[3:5]
    assert checkpointer.history(t, limit=0) == []
    assert checkpointer.history(tid("unknown")) == []


def test_chain_runs_from_the_base_snapshot_to_the_checkpoint(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    made = extend(checkpointer, t, 7, snapshot_every=3)  # snapshots at 0, 3, 6
    assert checkpointer.chain(t, made[0].checkpoint_id) == [made[0]]
    assert checkpointer.chain(t, made[2].checkpoint_id) == made[0:3]
    assert checkpointer.chain(t, made[5].checkpoint_id) == made[3:6]
    assert checkpointer.chain(t, made[6].checkpoint_id) == [made[6]]


def test_chain_across_a_fork_ignores_the_other_branch(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    root, a1, a2 = extend(checkpointer, t, 3)  # main branch: root <- a1 <- a2
    # a fork from a1 (the head is a2: the fork's first put expects it)
    b2 = record(t, a1)
    checkpointer.put(b2, expected_head=a2.checkpoint_id, messages={})
    b3, b4 = extend(checkpointer, t, 2, after=b2)
    # and more on the main branch's step numbers, after the fork
    a3 = record(t, a2)
    checkpointer.put(a3, expected_head=b4.checkpoint_id, messages={})
    assert checkpointer.chain(t, b4.checkpoint_id) == [root, a1, b2, b3, b4]
    assert checkpointer.chain(t, a3.checkpoint_id) == [root, a1, a2, a3]
    assert checkpointer.history(t) == [a3, b4, b3, b2, a2, a1, root]


def test_chain_of_an_unknown_checkpoint_is_a_clear_error(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    extend(checkpointer, t, 2)
    with pytest.raises(DeserializationError, match="not stored"):
        checkpointer.chain(t, "no-such-checkpoint")


def test_chain_does_not_trust_clocks(checkpointer: BaseCheckpointer, tid: Tid) -> None:
    """A resumed run in a process whose clock is behind writes ids that sort before the parent."""
    t = tid("t")
    early, late = new_checkpoint_id(), new_checkpoint_id()
    root = CheckpointRecord(
        thread_id=t, checkpoint_id=late, parent_id=None, step=0, created_at=2.0,
        base_id=late, payload=b"root",
    )  # fmt: skip
    child = CheckpointRecord(
        thread_id=t, checkpoint_id=early, parent_id=late, step=1, created_at=1.0,
        base_id=late, payload=b"child",
    )  # fmt: skip
    checkpointer.put(root, expected_head=None, messages={})
    checkpointer.put(child, expected_head=late, messages={})
    assert checkpointer.head(t) == early
    assert checkpointer.chain(t, early) == [root, child]


# -- pending writes ------------------------------------------------------------------------


def test_pending_writes_by_task_index_until_a_child_is_put(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    root, head = extend(checkpointer, t, 2)
    checkpointer.put_pending(t, root.checkpoint_id, [PendingWrite(task_index=0, payload=b"old")])
    checkpointer.put_pending(
        t,
        head.checkpoint_id,
        [PendingWrite(task_index=2, payload=b"two"), PendingWrite(task_index=0, payload=b"zero")],
    )
    # a later save for the same step adds tasks and replaces a task's earlier entry
    checkpointer.put_pending(
        t,
        head.checkpoint_id,
        [PendingWrite(task_index=1, payload=b"one"), PendingWrite(task_index=2, payload=b"2!")],
    )
    assert checkpointer.pending(t, head.checkpoint_id) == [
        PendingWrite(task_index=0, payload=b"zero"),
        PendingWrite(task_index=1, payload=b"one"),
        PendingWrite(task_index=2, payload=b"2!"),
    ]
    assert checkpointer.pending(t, "unknown") == []
    assert checkpointer.pending(tid("other"), head.checkpoint_id) == []
    # the step finished: its checkpoint's child clears what was pending against the parent
    child = record(t, head)
    checkpointer.put(child, expected_head=head.checkpoint_id, messages={})
    assert checkpointer.pending(t, head.checkpoint_id) == []
    assert checkpointer.pending(t, root.checkpoint_id) == [
        PendingWrite(task_index=0, payload=b"old")
    ]


def test_head_and_pending_reads_the_head_and_only_its_pending_writes(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    assert checkpointer.head_and_pending(t) == (None, [])
    root, head = extend(checkpointer, t, 2)
    assert checkpointer.head_and_pending(t) == (head.checkpoint_id, [])
    checkpointer.put_pending(t, root.checkpoint_id, [PendingWrite(task_index=0, payload=b"old")])
    checkpointer.put_pending(
        t,
        head.checkpoint_id,
        [PendingWrite(task_index=3, payload=b"three"), PendingWrite(task_index=1, payload=b"one")],
    )
    assert checkpointer.head_and_pending(t) == (
        head.checkpoint_id,
        [PendingWrite(task_index=1, payload=b"one"), PendingWrite(task_index=3, payload=b"three")],
    )
    assert checkpointer.head_and_pending(tid("other")) == (None, [])


def test_a_failed_put_keeps_the_pending_writes(checkpointer: BaseCheckpointer, tid: Tid) -> None:
    t = tid("t")
    root, _ = extend(checkpointer, t, 2)
    checkpointer.put_pending(t, root.checkpoint_id, [PendingWrite(task_index=0, payload=b"p")])
    with pytest.raises(ConcurrentRunError):
        checkpointer.put(record(t, root), expected_head=root.checkpoint_id, messages={})
    assert checkpointer.pending(t, root.checkpoint_id) == [PendingWrite(task_index=0, payload=b"p")]


# -- threads, deleting ---------------------------------------------------------------------


def test_threads_lists_every_thread_with_a_checkpoint_sorted(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    names = [tid(n) for n in ("b", "a", "c")]
    for name in names:
        extend(checkpointer, name, 1)
    checkpointer.put_pending(tid("only-pending"), "x", [PendingWrite(task_index=0, payload=b"")])
    listed = checkpointer.threads()
    assert listed == sorted(listed)
    assert [n for n in listed if n in names] == sorted(names)
    assert tid("only-pending") not in listed


def test_delete_thread_forgets_it_and_leaves_the_others(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    gone, kept = tid("gone"), tid("kept")
    made = {t: extend(checkpointer, t, 3) for t in (gone, kept)}
    for t in (gone, kept):
        checkpointer.put_pending(
            t, made[t][-1].checkpoint_id, [PendingWrite(task_index=0, payload=t.encode())]
        )
    checkpointer.delete_thread(gone)
    assert checkpointer.head(gone) is None
    assert checkpointer.history(gone) == []
    assert checkpointer.get(gone, made[gone][0].checkpoint_id) is None
    assert checkpointer.messages(gone, ["m0", "m1"]) == {}
    assert checkpointer.pending(gone, made[gone][-1].checkpoint_id) == []
    assert gone not in checkpointer.threads()
    assert checkpointer.history(kept) == list(reversed(made[kept]))
    assert checkpointer.messages(kept, ["m0", "m2"]) == {"m0": b"message 0", "m2": b"message 2"}
    assert checkpointer.pending(kept, made[kept][-1].checkpoint_id) == [
        PendingWrite(task_index=0, payload=kept.encode())
    ]
    # the id can start a new thread
    extend(checkpointer, gone, 1)
    assert len(checkpointer.history(gone)) == 1
    checkpointer.delete_thread(tid("never-existed"))


# -- prune and compact ---------------------------------------------------------------------


def test_prune_keeps_the_newest_of_the_head_branch_and_the_chains_they_need(
    checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    main = extend(checkpointer, t, 10, snapshot_every=4)  # snapshots at 0, 4, 8
    # an abandoned branch from step 5, then the head moves back to the main line
    side = record(t, main[5])
    checkpointer.put(side, expected_head=main[-1].checkpoint_id, messages={})
    head = record(t, main[-1])
    checkpointer.put(head, expected_head=side.checkpoint_id, messages={})
    line = [*main, head]  # steps 0..10, snapshots at 0, 4, 8
    checkpointer.put_pending(t, main[1].checkpoint_id, [PendingWrite(task_index=0, payload=b"")])

    removed = checkpointer.prune(t, 4)  # newest 4: steps 7..10, whose chain starts at 4
    kept = line[4:]
    assert removed == len(line) + 1 - len(kept)
    assert checkpointer.history(t) == list(reversed(kept))
    assert checkpointer.head(t) == head.checkpoint_id
    for rec in kept:
        assert checkpointer.chain(t, rec.checkpoint_id)[-1] == rec
    assert checkpointer.pending(t, main[1].checkpoint_id) == []
    assert checkpointer.prune(t, 4) == 0
    assert checkpointer.prune(tid("unknown"), 1) == 0


def test_prune_to_one_keeps_a_rebuildable_head(checkpointer: BaseCheckpointer, tid: Tid) -> None:
    t = tid("t")
    made = extend(checkpointer, t, 6, snapshot_every=4)  # snapshots at 0, 4
    checkpointer.prune(t, 1)
    assert checkpointer.chain(t, made[-1].checkpoint_id) == made[4:]
    assert checkpointer.history(t)[0] == made[-1]


def test_compact_after_pruning_a_large_thread_shrinks_the_file(
    request: pytest.FixtureRequest, backend: Backend, checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    if backend.path is None and backend.size is None:
        checkpointer.compact()  # nothing to give back, but callable
        return
    t = tid("t")
    extend(checkpointer, t, 200, snapshot_every=50, payload=os.urandom(20_000))

    def size() -> int:
        if backend.size is not None:
            return backend.size()
        path = backend.path
        assert path is not None
        return sum(
            p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists()
        )

    before = size()
    assert checkpointer.prune(t, 2) >= 150
    checkpointer.compact()
    after = size()
    # 50 of the 200 records stay (the newest two replay from the snapshot at step 150): a
    # quarter of the data, plus what the store spends on indexes and pages
    assert after < before / 3, (before, after)
    assert len(checkpointer.history(t)) >= 2


# -- concurrent writers --------------------------------------------------------------------


def assert_linear(store: BaseCheckpointer, thread_id: str) -> list[CheckpointRecord]:
    """The thread is one chain from its head to its root, holding every record."""
    records = {r.checkpoint_id: r for r in store.history(thread_id)}
    chain = []
    current = store.head(thread_id)
    while current is not None:
        chain.append(records[current])
        current = records[current].parent_id
    assert len(chain) == len(records), "records off the head's chain: two histories interleaved"
    assert [r.step for r in chain] == list(range(len(chain) - 1, -1, -1))
    return chain


def test_racing_threads_extend_the_head_one_winner_per_round(
    backend: Backend, checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    t = tid("t")
    (root,) = extend(checkpointer, t, 1)
    workers, rounds = 4, 15
    stores = [backend.make() if backend.shared_store else checkpointer for _ in range(workers)]
    barrier = threading.Barrier(workers, timeout=30)
    outcomes: list[list[bool]] = [[] for _ in range(workers)]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        store = stores[i]
        try:
            for _ in range(rounds):
                barrier.wait()
                head = store.head(t)
                assert head is not None
                parent = store.get(t, head)
                assert parent is not None
                barrier.wait()  # everyone has read the same head
                try:
                    store.put(record(t, parent), expected_head=head, messages={f"w{i}": b""})
                    outcomes[i].append(True)
                except ConcurrentRunError:
                    outcomes[i].append(False)
        except BaseException as exc:  # surfaced below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        if store is not checkpointer:
            close_quietly(store)
    assert not errors, errors
    for r in range(rounds):
        assert sum(outcomes[i][r] for i in range(workers)) == 1, f"round {r}"
    chain = assert_linear(checkpointer, t)
    assert len(chain) == rounds + 1
    assert chain[-1] == root


def test_racing_processes_keep_one_linear_history(
    request: pytest.FixtureRequest,
    backend: Backend,
    checkpointer: BaseCheckpointer,
    tid: Tid,
) -> None:
    if backend.path is None and backend.spec is None:
        pytest.skip(f"{backend.name}: no store shared between processes in this suite")
    fork_server: ForkServer = request.getfixturevalue("fork_server")
    t = tid("t")
    extend(checkpointer, t, 1)
    children, attempts = 3, 25
    job = fork_server.submit(
        {
            "mode": "cas",
            "children": children,
            "path": str(backend.path),
            "store": backend.spec,
            "thread": t,
            "attempts": attempts,
            "start_at": time.time() + 0.2,
        }
    )
    results = []
    while len(results) < children:
        parts = fork_server.expect("RESULT", job=job, timeout=60)
        results.append(json.loads(parts[2]))
    fork_server.expect("ALLDONE", job=job, timeout=60)
    wins = sum(r["wins"] for r in results)
    assert sum(r["wins"] + r["losses"] for r in results) == children * attempts
    assert sum(r["losses"] for r in results) > 0, "the processes never raced"
    chain = assert_linear(checkpointer, t)
    assert len(chain) == wins + 1
    stored = checkpointer.messages(
        t, [f"m{c}-{i}" for c in range(children) for i in range(attempts)]
    )
    assert len(stored) == wins  # a losing put stored none of its messages


def test_listing_threads_while_others_are_written(
    request: pytest.FixtureRequest, backend: Backend, checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    errors: list[BaseException] = []
    puts = 2500 if backend.name == "memory" else 200  # the race needs many; I/O stores are slow

    def round_of_writes(n: int) -> None:
        stop = threading.Event()

        def write(k: int) -> None:
            try:
                for i in range(puts):
                    checkpointer.put(record(tid(f"r{n}-w{k}-{i}")), expected_head=None, messages={})
            except BaseException as exc:
                errors.append(exc)

        def read() -> None:
            try:
                while not stop.is_set():
                    checkpointer.threads()
            except BaseException as exc:
                errors.append(exc)

        writers = [threading.Thread(target=write, args=(k,)) for k in range(2)]
        reader = threading.Thread(target=read)
        reader.start()
        for w in writers:
            w.start()
        for w in writers:
            w.join()
        stop.set()
        reader.join()

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up
    try:
        for n in range(3):
            round_of_writes(n)
            if errors:
                break
    finally:
        sys.setswitchinterval(switch)
    assert not errors, errors[0]


# -- corrupt rows, seen through a compiled graph -------------------------------------------


@pytest.mark.parametrize("garbage", [b"\x00not a checkpoint", "a text value", 12345, b""])
def test_a_corrupt_checkpoint_row_is_a_clear_error_and_other_threads_still_load(
    backend: Backend, checkpointer: BaseCheckpointer, tid: Tid, garbage: object
) -> None:
    if backend.corrupt is None:
        pytest.skip(f"{backend.name}: the suite has no way to corrupt its rows")
    app = chat_app(checkpointer)
    bad, good = tid("bad"), tid("good")
    for t in (bad, good):
        app.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)  # type: ignore[attr-defined]
    head = checkpointer.head(bad)
    assert head is not None
    backend.corrupt(bad, head, garbage)
    with pytest.raises(DeserializationError) as caught:
        app.get_state(bad)  # type: ignore[attr-defined]
    assert bad in str(caught.value)
    assert [m.text for m in app.get_state(good).values.messages] == ["hi", "reply 1"]  # type: ignore[attr-defined]
    out = app.invoke({"messages": [HumanMessage("again")]}, thread_id=good)  # type: ignore[attr-defined]
    assert len(out.messages) == 4


def sqlite_exec(path: Path | None, sql: str, *args: object) -> None:
    assert path is not None
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(sql, args)


@pytest.mark.parametrize("garbage", [b"\x01\x02garbage", "text"])
def test_a_corrupt_message_row_is_a_clear_error_naming_the_thread(
    request: pytest.FixtureRequest,
    backend: Backend,
    checkpointer: BaseCheckpointer,
    tid: Tid,
    garbage: object,
) -> None:
    if backend.path is None:
        pytest.skip(f"{backend.name}: the suite has no way to corrupt its rows")
    app = chat_app(checkpointer)
    bad, good = tid("bad"), tid("good")
    for t in (bad, good):
        app.invoke({"messages": [HumanMessage("hi")]}, thread_id=t)  # type: ignore[attr-defined]
    sqlite_exec(backend.path, "UPDATE messages SET data = ? WHERE thread_id = ?", garbage, bad)
    with pytest.raises(DeserializationError) as caught:
        app.get_state(bad)  # type: ignore[attr-defined]
    assert len(app.get_state(good).values.messages) == 2  # type: ignore[attr-defined]
    assert bad in str(caught.value)


def test_a_corrupt_pending_row_is_a_deserialization_error(
    request: pytest.FixtureRequest, backend: Backend, checkpointer: BaseCheckpointer, tid: Tid
) -> None:
    if backend.path is None:
        pytest.skip(f"{backend.name}: the suite has no way to corrupt its rows")
    t = tid("t")
    (root,) = extend(checkpointer, t, 1)
    checkpointer.put_pending(t, root.checkpoint_id, [PendingWrite(task_index=0, payload=b"ok")])
    sqlite_exec(backend.path, "UPDATE pending SET payload = 'text' WHERE thread_id = ?", t)
    with pytest.raises(DeserializationError):
        checkpointer.pending(t, root.checkpoint_id)
