"""Rewriting a thread's stored history: copying a thread, rolling a run back.

The checkpointer protocol has no "copy a thread" or "delete these
checkpoints" operation, so both are done with the operations it has, on
every backend alike: the records to keep, their pending writes and the
thread's messages are read, the target thread is deleted, and they are
stored again under the target id, the chosen head written last. A rollback
is only done by the run holding the thread (multitask `rollback`, cancel
`action=rollback`), so no writer can interleave; a reader may briefly see
the thread empty.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from flowgraph.graph._persist import referenced_messages

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import CheckpointRecord
    from flowgraph.graph import CompiledGraph

__all__ = ["copy_thread", "roll_back"]


def _rewrite(
    app: CompiledGraph,
    source: str,
    target: str,
    records: list[CheckpointRecord],
    head: str,
) -> None:
    """Store `records` (oldest first) as thread `target`, ending with `head`; drop the rest."""
    store = app.checkpointer
    assert store is not None
    messages = store.messages(source, referenced_messages(store, app.engine.state, source))
    pending = {r.checkpoint_id: store.pending(source, r.checkpoint_id) for r in records}
    by_id = {r.checkpoint_id: r for r in records}
    app.delete_thread(target)
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
    _rewrite(app, source, target, records, head)
    return len(records)


def roll_back(app: CompiledGraph, thread_id: str, head_before: str | None) -> int:
    """Remove the checkpoints written since `head_before` (None: the whole thread); how many."""
    store = app.checkpointer
    assert store is not None
    head = store.head(thread_id)
    if head is None or head == head_before:
        return 0
    records = store.history(thread_id)
    if head_before is None:
        app.delete_thread(thread_id)
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
    _rewrite(app, thread_id, thread_id, kept, head_before)
    return len(dropped)
