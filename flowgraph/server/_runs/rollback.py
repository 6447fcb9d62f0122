"""Rewriting a thread's stored history: copying a thread, rolling a run back.

The checkpointer protocol has no "copy a thread" or "delete these
checkpoints" operation, so both are done with the operations it has, on
every backend alike: the records to keep, their pending writes and the
thread's messages are read, the target thread is deleted, and they are
stored again under the target id, the chosen head written last. The
target's lease is held meanwhile, so no run (of any process) starts on a
half-written thread; a reader may briefly see it empty. A copy reads the
source as a run left it or as a running run is extending it (it only adds
checkpoints): the copy is the source as of its head when the copy began.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

from flowgraph.errors import ConcurrentRunError
from flowgraph.graph._thread.record import referenced_messages
from flowgraph.graph._thread_api import hold_thread

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import CheckpointRecord
    from flowgraph.graph import CompiledGraph

__all__ = ["ROLLBACK_WAIT_S", "copy_thread", "roll_back"]

ROLLBACK_WAIT_S = 30.0
"""How long a rollback waits for the run it rolls back to give the thread up."""


def _rewrite(
    app: CompiledGraph,
    source: str,
    target: str,
    records: list[CheckpointRecord],
    head: str,
    holder: str,
) -> None:
    """Store `records` (oldest first) as thread `target`, ending with `head`; drop the rest.

    The caller holds `target` as `holder`.
    """
    store = app.checkpointer
    assert store is not None
    messages = store.messages(source, referenced_messages(store, app.engine.state, source))
    pending = {r.checkpoint_id: store.pending(source, r.checkpoint_id) for r in records}
    by_id = {r.checkpoint_id: r for r in records}
    if head not in by_id:
        raise ConcurrentRunError(
            f"Thread {source!r} was rewritten (deleted, pruned or rolled back) while it was "
            "being read; try again",
            thread_id=source,
        )
    app.delete_thread(target, run_id=holder)
    order = [r for r in records if r.checkpoint_id != head] + [by_id[head]]
    expected: str | None = None
    for index, record in enumerate(order):
        store.put(
            replace(record, thread_id=target),
            expected_head=expected,
            messages=messages if index == 0 else {},
        )
        expected = record.checkpoint_id
    for checkpoint_id, writes in pending.items():
        if writes:
            store.put_pending(target, checkpoint_id, writes)
    store.forget_messages(target, referenced_messages(store, app.engine.state, target))


def copy_thread(app: CompiledGraph, source: str, target: str) -> int:
    """Copy every checkpoint of `source` into the new thread `target`; how many."""
    store = app.checkpointer
    assert store is not None
    head = store.head(source)
    if head is None:
        return 0
    records = store.history(source)[::-1]
    holder = f"copy-{uuid.uuid4().hex}"
    with hold_thread(store, target, doing="be written as a copy", run_id=holder):
        _rewrite(app, source, target, records, head, holder)
    return len(records)


def roll_back(app: CompiledGraph, thread_id: str, head_before: str | None) -> int:
    """Remove the checkpoints written since `head_before` (None: the whole thread); how many.

    Holds the thread meanwhile (waiting up to ROLLBACK_WAIT_S for the run
    being rolled back to give it up), so no queued run starts in between.
    """
    store = app.checkpointer
    assert store is not None
    holder = f"rollback-{uuid.uuid4().hex}"
    with hold_thread(store, thread_id, doing="be rolled back", run_id=holder, wait=ROLLBACK_WAIT_S):
        return _roll_back_held(app, thread_id, head_before, holder)


def _roll_back_held(
    app: CompiledGraph, thread_id: str, head_before: str | None, holder: str
) -> int:
    store = app.checkpointer
    assert store is not None
    head = store.head(thread_id)
    if head is None or head == head_before:
        return 0
    records = store.history(thread_id)
    if head_before is None:
        app.delete_thread(thread_id, run_id=holder)
        return len(records)
    by_id = {r.checkpoint_id: r for r in records}
    dropped: set[str] = set()
    current: str | None = head
    while current is not None and current != head_before:
        dropped.add(current)
        record = by_id.get(current)
        current = record.parent_id if record is not None else None
    if current != head_before:
        raise RuntimeError(
            f"Thread {thread_id!r} no longer descends from checkpoint {head_before!r}; "
            "it was forked or pruned while the run was rolling back"
        )
    kept = [r for r in reversed(records) if r.checkpoint_id not in dropped]
    _rewrite(app, thread_id, thread_id, kept, head_before, holder)
    return len(dropped)
