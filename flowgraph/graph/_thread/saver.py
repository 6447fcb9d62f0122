"""Writing a run's steps to its thread: each step, each pause, each `once()` result.

`Saver` stores each finished step (a compare-and-set on the thread's head,
taking or giving back the run's lease in the same write where the store
can), each pause and each `once()` result (see `record` for what a record
holds, `replay` for reading it back).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from flowgraph._context import RunUsage
from flowgraph.checkpoint._lease import process_owner
from flowgraph.checkpoint.base import BaseCheckpointer, CheckpointRecord, PendingWrite
from flowgraph.graph._core.merge import step_scope
from flowgraph.graph._core.pool import call_store
from flowgraph.graph._core.spec import Task, TaskResult
from flowgraph.graph._thread.lease import LeaseHeld, claim_taken
from flowgraph.graph._thread.record import (
    Cursor,
    PendingTask,
    encode_pending,
    encode_step,
)

if TYPE_CHECKING:
    from flowgraph.graph._core.schema import StateAdapter
    from flowgraph.graph._thread.lease import RunLease
    from flowgraph.graph._thread.replay import ThreadCache

__all__ = ["Saver"]

T = TypeVar("T")


class Saver:
    """A run's connection to its thread's history: writes each step and each pause.

    With `direct`, the checkpointer's sync methods are called from the run
    loop (the sync API's private loop, or a store that never blocks);
    otherwise their async twins keep the caller's event loop free.
    """

    def __init__(
        self,
        checkpointer: BaseCheckpointer,
        state: StateAdapter,
        cursor: Cursor,
        *,
        run_id: str,
        direct: bool,
        cache: ThreadCache | None = None,
        fork: bool = False,
        branch: bool = False,
        claim: RunLease | None = None,
    ) -> None:
        self.claim = claim
        """A lease the first write takes with it (`put_and_acquire`); None once taken."""
        self.checkpointer = checkpointer
        self.state = state
        self.cursor = cursor
        self.run_id = run_id
        self.direct = direct
        self.cache = cache
        self.fork = fork
        """The next step starts a new branch: its checkpoint's source is "fork"."""
        self.branch = branch or fork
        """The run extends a branch (not the thread's first line): every checkpoint it
        writes says so in its metadata (`"branch": True`), so a later run on it knows to
        look for tool results another branch stored (see `graph._thread.reuse`)."""

    def step_scope(self) -> str:
        return step_scope(self.cursor.thread_id, self.cursor.head)

    async def _call(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        return await call_store(self.direct, fn, *args, **kwargs)

    async def save_step(
        self,
        values: dict[str, Any],
        results: Sequence[TaskResult],
        tasks: Sequence[Task],
        joins: dict[int, set[str]],
        usage: RunUsage,
        step: int,
        source: str = "loop",
        *,
        release: RunLease | None = None,
        command: bool = False,
    ) -> CheckpointRecord:
        """Store a finished step (compare-and-set on the thread head); raise if another won.

        `release`: the run's lease, when this is its last step; the store gives
        it back in the same write if it can (`put_and_release`). `command`: the
        step is a `Command` input's (no checkpoint before it is derived, see `inputs`).
        """
        cursor = self.cursor
        if self.fork:
            source, self.fork = "fork", False
        metadata: dict[str, Any] = {
            "source": source,
            "nodes": [r.task.node for r in results],
            "run_id": self.run_id,
            "usage": usage.as_dict(),
        }
        if self.branch:
            metadata["branch"] = True
        if command:
            metadata["command"] = True
        record, messages = encode_step(
            self.state,
            cursor,
            step=step,
            values=values,
            results=results,
            next_tasks=tasks,
            joins=joins,
            metadata=metadata,
        )
        store, expected = self.checkpointer, cursor.expected
        if self.claim is not None:
            claim, self.claim = self.claim, None
            holder = await self._call(
                store.put_and_acquire,
                record,
                expected_head=expected,
                messages=messages,
                run_id=claim.run_id,
                owner=process_owner(),
                lease_s=claim.lease_s,
            )
            if holder is not None:
                raise LeaseHeld(holder)
            claim_taken(claim)  # renewed from now on
        elif release is not None and not release.lost:
            release.released = await self._call(
                store.put_and_release,
                record,
                expected_head=expected,
                messages=messages,
                run_id=release.run_id,
                owner=process_owner(),
            )
        else:
            await self._call(store.put, record, expected_head=expected, messages=messages)
        cursor.committed(record.checkpoint_id)
        if self.cache is not None:
            self.cache.put(record, values, tasks, joins, metadata, cursor)
        return record

    def save_memo(
        self, index: int, task: PendingTask, key: str, data: bytes, lock: threading.Lock
    ) -> None:
        """Add a `once()` result to a running task's row and store the row, now.

        Called from the task's thread or the event loop; `lock` (one per task)
        orders two results of one task, so the last row written has both.
        """
        head = self.cursor.head
        assert head is not None, "a run saves its input step before any node runs"
        with lock:
            task.memo[key] = data
            write = PendingWrite(task_index=index, payload=encode_pending(task))
            self.checkpointer.put_pending(self.cursor.thread_id, head, [write])

    async def save_pending(self, pending: dict[int, PendingTask]) -> None:
        """Keep the finished tasks and pauses of an unfinished step."""
        head = self.cursor.head
        assert head is not None, "a run saves its input step before any other"
        writes = [PendingWrite(task_index=i, payload=encode_pending(t)) for i, t in pending.items()]
        await self._call(self.checkpointer.put_pending, self.cursor.thread_id, head, writes)
