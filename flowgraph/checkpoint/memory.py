"""MemoryCheckpointer: checkpoints in this process's memory, for tests and short-lived apps."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from flowgraph.checkpoint.base import (
    BaseCheckpointer,
    CheckpointRecord,
    PendingWrite,
    ThreadLease,
    chain_from_rows,
    concurrent_run_error,
    kept_after_prune,
)

__all__ = ["MemoryCheckpointer"]


@dataclass
class _Thread:
    head: str | None = None
    records: dict[str, CheckpointRecord] = field(default_factory=dict)
    messages: dict[str, bytes] = field(default_factory=dict)
    pending: dict[str, list[PendingWrite]] = field(default_factory=dict)


class MemoryCheckpointer(BaseCheckpointer):
    """Every thread in a dict, guarded by one lock; nothing survives the process."""

    is_nonblocking = True
    """Its calls never wait on I/O, so the engine calls them directly from async code."""

    def __init__(self, *, lease_s: float | None = None) -> None:
        self._threads: dict[str, _Thread] = {}
        self._leases: dict[str, tuple[str, str, float]] = {}
        """thread id -> (run id, owner, expiry on the monotonic clock)."""
        self._lock = threading.Lock()
        if lease_s is not None:
            self.lease_s = lease_s

    def put(
        self,
        record: CheckpointRecord,
        *,
        expected_head: str | None,
        messages: Mapping[str, bytes],
    ) -> None:
        with self._lock:
            self._put(record, expected_head, messages)

    def _put(
        self, record: CheckpointRecord, expected_head: str | None, messages: Mapping[str, bytes]
    ) -> None:
        """`put`, under the lock."""
        thread = self._threads.get(record.thread_id)
        head = thread.head if thread is not None else None
        if head != expected_head:
            raise concurrent_run_error(record.thread_id, expected_head, head)
        if thread is None:
            thread = self._threads[record.thread_id] = _Thread()
        for key, data in messages.items():
            thread.messages.setdefault(key, data)
        thread.records[record.checkpoint_id] = record
        thread.head = record.checkpoint_id
        if record.parent_id is not None:
            thread.pending.pop(record.parent_id, None)

    def _put_and_acquire(
        self,
        record: CheckpointRecord,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        run_id: str,
        owner: str,
        lease_s: float,
    ) -> ThreadLease | None:
        thread_id = record.thread_id
        now = time.monotonic()
        with self._lock:
            held = self._leases.get(thread_id)
            if held is not None and held[2] > now:
                return self._lease(thread_id, held, now)
            self._put(record, expected_head, messages)
            self._leases[thread_id] = (run_id, owner, now + lease_s)
        return None

    def _put_and_release(
        self,
        record: CheckpointRecord,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        run_id: str,
        owner: str,
    ) -> bool:
        with self._lock:
            self._put(record, expected_head, messages)
            self._release(record.thread_id, run_id, owner)
        return True

    def put_pending(
        self, thread_id: str, checkpoint_id: str, writes: Sequence[PendingWrite]
    ) -> None:
        with self._lock:
            thread = self._threads.setdefault(thread_id, _Thread())
            kept = {w.task_index: w for w in thread.pending.get(checkpoint_id, [])}
            kept.update({w.task_index: w for w in writes})
            thread.pending[checkpoint_id] = sorted(kept.values(), key=lambda w: w.task_index)

    def head(self, thread_id: str) -> str | None:
        thread = self._threads.get(thread_id)
        return thread.head if thread is not None else None

    def get(self, thread_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        thread = self._threads.get(thread_id)
        return thread.records.get(checkpoint_id) if thread is not None else None

    def chain(self, thread_id: str, checkpoint_id: str) -> list[CheckpointRecord]:
        thread = self._threads.get(thread_id)
        records = thread.records.values() if thread is not None else ()
        with self._lock:
            return chain_from_rows(list(records), checkpoint_id, thread_id)

    def messages(self, thread_id: str, keys: Iterable[str]) -> dict[str, bytes]:
        thread = self._threads.get(thread_id)
        if thread is None:
            return {}
        stored = thread.messages
        return {key: stored[key] for key in keys if key in stored}

    def pending(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        thread = self._threads.get(thread_id)
        return list(thread.pending.get(checkpoint_id, ())) if thread is not None else []

    def history(
        self, thread_id: str, *, limit: int | None = None, before: str | None = None
    ) -> list[CheckpointRecord]:
        thread = self._threads.get(thread_id)
        if thread is None:
            return []
        with self._lock:
            records = sorted(thread.records.values(), key=lambda r: r.checkpoint_id, reverse=True)
        if before is not None:
            records = [r for r in records if r.checkpoint_id < before]
        return records if limit is None else records[:limit]

    def threads(self) -> list[str]:
        with self._lock:
            return sorted(t for t, thread in self._threads.items() if thread.records)

    def delete_thread(self, thread_id: str) -> None:
        with self._lock:
            self._threads.pop(thread_id, None)

    def prune(self, thread_id: str, keep_last: int) -> int:
        with self._lock:
            thread = self._threads.get(thread_id)
            if thread is None or thread.head is None:
                return 0
            keep = kept_after_prune(
                ((r.checkpoint_id, r.parent_id, r.base_id) for r in thread.records.values()),
                thread.head,
                keep_last,
            )
            dropped = [cid for cid in thread.records if cid not in keep]
            for cid in dropped:
                del thread.records[cid]
                thread.pending.pop(cid, None)
            return len(dropped)

    # -- leases (the monotonic clock: this store lives in one process) --------------

    def acquire_lease(
        self,
        thread_id: str,
        run_id: str,
        owner: str,
        lease_s: float,
        *,
        takeover: ThreadLease | None = None,
    ) -> ThreadLease | None:
        now = time.monotonic()
        with self._lock:
            held = self._leases.get(thread_id)
            if (
                held is None
                or held[2] <= now
                or (takeover is not None and held[:2] == (takeover.run_id, takeover.owner))
            ):
                self._leases[thread_id] = (run_id, owner, now + lease_s)
                return None
            return self._lease(thread_id, held, now)

    def renew_lease(self, thread_id: str, run_id: str, owner: str, lease_s: float) -> bool:
        now = time.monotonic()
        with self._lock:
            held = self._leases.get(thread_id)
            if held is None or held[:2] != (run_id, owner):
                return False
            self._leases[thread_id] = (run_id, owner, now + lease_s)
            return True

    def release_lease(self, thread_id: str, run_id: str, owner: str) -> None:
        with self._lock:
            self._release(thread_id, run_id, owner)

    def _release(self, thread_id: str, run_id: str, owner: str) -> None:
        """`release_lease`, under the lock."""
        held = self._leases.get(thread_id)
        if held is not None and held[:2] == (run_id, owner):
            del self._leases[thread_id]

    def read_lease(self, thread_id: str) -> ThreadLease | None:
        now = time.monotonic()
        with self._lock:
            held = self._leases.get(thread_id)
        if held is None or held[2] <= now:
            return None
        return self._lease(thread_id, held, now)

    @staticmethod
    def _lease(thread_id: str, held: tuple[str, str, float], now: float) -> ThreadLease:
        return ThreadLease(
            thread_id=thread_id,
            run_id=held[0],
            owner=held[1],
            expires_at=time.time() + held[2] - now,
        )

    def forget_messages(self, thread_id: str, keep: set[str]) -> int:
        with self._lock:
            thread = self._threads.get(thread_id)
            if thread is None:
                return 0
            gone = [key for key in thread.messages if key not in keep]
            for key in gone:
                del thread.messages[key]
            return len(gone)

    # The memory store never blocks: its async twins need no worker thread.

    async def aput(
        self,
        record: CheckpointRecord,
        *,
        expected_head: str | None,
        messages: Mapping[str, bytes],
    ) -> None:
        self.put(record, expected_head=expected_head, messages=messages)

    async def aput_pending(
        self, thread_id: str, checkpoint_id: str, writes: Sequence[PendingWrite]
    ) -> None:
        self.put_pending(thread_id, checkpoint_id, writes)

    async def ahead(self, thread_id: str) -> str | None:
        return self.head(thread_id)

    async def aget(self, thread_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        return self.get(thread_id, checkpoint_id)

    async def achain(self, thread_id: str, checkpoint_id: str) -> list[CheckpointRecord]:
        return self.chain(thread_id, checkpoint_id)

    async def amessages(self, thread_id: str, keys: Iterable[str]) -> dict[str, bytes]:
        return self.messages(thread_id, keys)

    async def apending(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        return self.pending(thread_id, checkpoint_id)

    async def aacquire_lease(
        self,
        thread_id: str,
        run_id: str,
        owner: str,
        lease_s: float,
        *,
        takeover: ThreadLease | None = None,
    ) -> ThreadLease | None:
        return self.acquire_lease(thread_id, run_id, owner, lease_s, takeover=takeover)

    async def arelease_lease(self, thread_id: str, run_id: str, owner: str) -> None:
        self.release_lease(thread_id, run_id, owner)

    async def aread_lease(self, thread_id: str) -> ThreadLease | None:
        return self.read_lease(thread_id)
