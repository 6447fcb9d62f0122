"""Reading a checkpoint back: its chain replayed through the live reducers, or the cache.

A checkpoint's state is rebuilt by replaying the writes stored since its
base snapshot through `apply_writes`, the function the live run merged them
with, so the rebuilt state is exactly the state the run had. `ThreadCache`
keeps the state each thread last reached in this process, so continuing a
thread costs one look at its head instead of a replay.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from flowgraph.checkpoint.base import BaseCheckpointer, CheckpointRecord, PendingWrite
from flowgraph.errors import DeserializationError, InvalidUpdateError
from flowgraph.graph._core.merge import apply_writes, step_scope
from flowgraph.graph._core.pool import call_store
from flowgraph.graph._core.spec import Task, TaskResult
from flowgraph.graph._core.types import MISSING, START
from flowgraph.graph._thread.record import (
    Cursor,
    Loaded,
    decode_pending_writes,
    record_payload,
)
from flowgraph.reducers import add_messages

if TYPE_CHECKING:
    from flowgraph.checkpoint import serde
    from flowgraph.graph._core.schema import StateAdapter
else:
    from flowgraph._lazy import LazyModule

    serde = LazyModule("flowgraph.checkpoint.serde")

__all__ = ["ThreadCache", "load", "loaded_checkpoint"]


def load(
    checkpointer: BaseCheckpointer,
    state: StateAdapter,
    thread_id: str,
    checkpoint_id: str,
    *,
    head: str | None = None,
    cache: ThreadCache | None = None,
    pending: list[PendingWrite] | None = None,
) -> Loaded:
    """Rebuild a checkpoint's state by replaying its chain through the live reducers.

    `head` is the thread's current head if the caller already read it, and
    `pending` the writes left against the checkpoint; a `cache` holding the
    checkpoint spares the replay.
    """
    if head is None:
        head = checkpointer.head(thread_id)
    if pending is None:
        pending = checkpointer.pending(thread_id, checkpoint_id)
    cached = cache.get(thread_id, checkpoint_id) if cache is not None else None
    if cached is not None:
        cached.cursor.expected = head
        cached.pending.update(decode_pending_writes(pending))
        return cached
    chain = checkpointer.chain(thread_id, checkpoint_id)
    payloads = [record_payload(r) for r in chain]
    fields = state.message_fields
    wanted: set[str] = set()
    for i, payload in enumerate(payloads):
        if i == 0:
            for key in fields:
                wanted.update(payload["values"].get(key, ()))
        else:
            for _, _, writes in payload["writes"]:
                for key, value in writes:
                    if key in fields:
                        wanted.update(m for m in value if isinstance(m, str))
    stored = checkpointer.messages(thread_id, wanted)
    missing = wanted - stored.keys()
    if missing:
        raise DeserializationError(
            f"Thread {thread_id!r} lost {len(missing)} stored message(s) "
            f"(e.g. {sorted(missing)[0]!r}); the store is damaged"
        )
    cursor = Cursor(thread_id, head=checkpoint_id, expected=head, base_id=chain[0].checkpoint_id)
    messages = {}
    for key, data in stored.items():
        try:
            message = serde.loads(data)
        except DeserializationError as exc:
            raise DeserializationError(
                f"Stored message {key!r} of thread {thread_id!r} is damaged: {exc}"
            ) from exc
        messages[key] = message
        cursor.remember(message, key)

    def resolve(key: str, value: Any) -> Any:
        return [messages[m] if isinstance(m, str) else m for m in value] if key in fields else value

    snapshot = payloads[0]["values"]
    values = {
        key: add_messages([], resolve(key, value)) if key in fields else value
        for key, value in snapshot.items()
    }
    cursor.snapshot_bytes = len(chain[0].payload)
    for record, payload in zip(chain[1:], payloads[1:], strict=True):
        results = [
            TaskResult(Task(node, index), [(key, resolve(key, value)) for key, value in writes])
            for node, index, writes in payload["writes"]
        ]
        values = apply_writes(
            state, values, results, scope=step_scope(thread_id, record.parent_id), step=record.step
        )
        cursor.bytes_since_snapshot += len(record.payload)
        cursor.steps_since_snapshot += 1
    last = payloads[-1]
    tasks = [Task(t[0], t[1], t[2] if len(t) > 2 else MISSING) for t in last["next"]]
    return Loaded(
        record=chain[-1],
        values=values,
        tasks=tasks,
        joins={int(k): set(v) for k, v in last["joins"].items()},
        metadata=last["metadata"],
        pending=decode_pending_writes(pending),
        cursor=cursor,
    )


class ThreadCache:
    """The state each recently used thread last reached in this process.

    Continuing a thread then costs one look at its head instead of reading
    and replaying its history; a head moved by another process is a miss,
    and pending writes are always read from the store.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._entries: OrderedDict[str, tuple[Any, ...]] = OrderedDict()
        """thread id -> what `put` took, as one tuple: a run puts one per step."""
        self._lock = threading.Lock()

    def get(self, thread_id: str, checkpoint_id: str) -> Loaded | None:
        with self._lock:
            entry = self._entries.get(thread_id)
            if entry is None or entry[0].checkpoint_id != checkpoint_id:
                return None
            self._entries.move_to_end(thread_id)
        record, values, tasks, joins, metadata, base_id, since, steps, size, keys, held = entry
        cursor = Cursor(
            thread_id, checkpoint_id, checkpoint_id, base_id, since, steps, size, keys, held
        )
        return Loaded(
            record,
            dict(values),
            list(tasks),
            {k: set(v) for k, v in joins.items()},
            metadata,
            {},
            cursor,
        )

    def put(
        self,
        record: CheckpointRecord,
        values: dict[str, Any],
        tasks: Sequence[Task],
        joins: dict[int, set[str]],
        metadata: dict[str, Any],
        cursor: Cursor,
    ) -> None:
        """Remember the state `cursor` reached by storing `record` (its head now)."""
        entry = (
            record,
            values,
            list(tasks),
            dict(joins),
            metadata,
            cursor.base_id,
            cursor.bytes_since_snapshot,
            cursor.steps_since_snapshot,
            cursor.snapshot_bytes,
            cursor.keys,
            cursor.held,
        )
        thread_id = record.thread_id
        with self._lock:
            entries = self._entries
            entries[thread_id] = entry
            entries.move_to_end(thread_id)
            while len(entries) > self.size:
                entries.popitem(last=False)

    def forget(self, thread_id: str) -> None:
        with self._lock:
            self._entries.pop(thread_id, None)


async def loaded_checkpoint(
    state: StateAdapter,
    checkpointer: BaseCheckpointer,
    thread_id: str,
    checkpoint_id: str | None,
    *,
    direct: bool,
    cache: ThreadCache | None = None,
) -> Loaded | None:
    """The checkpoint (default: the thread's head) rebuilt, or None for a new thread."""
    pending = None
    if checkpoint_id is None:  # the head, and what its unfinished step left, in one read
        head, pending = await call_store(direct, checkpointer.head_and_pending, thread_id)
        if head is None:
            return None
        checkpoint_id = head
    else:
        head = await call_store(direct, checkpointer.head, thread_id)
        if await call_store(direct, checkpointer.get, thread_id, checkpoint_id) is None:
            raise InvalidUpdateError(
                f"Thread {thread_id!r} has no checkpoint {checkpoint_id!r}; "
                "see get_state_history() for its checkpoint ids",
                node=START,
            )
    rebuild = partial(
        load,
        checkpointer,
        state,
        thread_id,
        checkpoint_id,
        head=head,
        cache=cache,
        pending=pending,
    )
    return rebuild() if direct else await asyncio.to_thread(rebuild)
