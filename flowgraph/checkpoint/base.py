"""The checkpointer protocol: what every storage backend does, and nothing more.

A backend stores opaque records and a per-thread message log; it never
decodes state. The engine decides what a record holds (a step's writes, or
now and then a full snapshot) and rebuilds state by replaying writes
through the same reducers the live run used, so every backend gives the
same answers and one conformance suite tests them all.

Every write is one transaction and a compare-and-set on the thread's head:
a checkpoint is stored only if the head is still the one its run started
from, so two runs on one thread can never interleave a history.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass

from flowgraph.checkpoint._lease import DEFAULT_LEASE_S, ThreadLease
from flowgraph.errors import ConcurrentRunError, DeserializationError

__all__ = [
    "BaseCheckpointer",
    "CheckpointRecord",
    "PendingWrite",
    "ThreadLease",
    "chain_from_rows",
    "concurrent_run_error",
    "kept_after_prune",
    "new_checkpoint_id",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckpointRecord:
    """One stored step of one thread: the columns backends index, and an opaque payload."""

    thread_id: str
    checkpoint_id: str
    """Time-ordered: a later checkpoint of a process sorts after an earlier one."""
    parent_id: str | None
    step: int
    created_at: float
    """Unix time, seconds."""
    base_id: str
    """The snapshot this checkpoint's state is rebuilt from (its own id if it is one)."""
    payload: bytes


@dataclass(frozen=True, kw_only=True, slots=True)
class PendingWrite:
    """What one task of an unfinished step left: its writes, or the interrupt it raised."""

    task_index: int
    payload: bytes


_id_lock = threading.Lock()
_last_time = 0
_process_tag = f"{int.from_bytes(os.urandom(2), 'big'):04x}"
_sequence = itertools.count()
_time_ns = time.time_ns
_random_bits = random.getrandbits


def new_checkpoint_id() -> str:
    """A checkpoint id that sorts by creation time, unique across processes.

    32 hex digits: nanoseconds (strictly increasing within a process), then
    a per-process tag and a counter so two processes never collide.
    """
    global _last_time
    with _id_lock:
        now = _time_ns()
        if now <= _last_time:
            now = _last_time + 1
        _last_time = now
        sequence = next(_sequence) & 0xFFFF
    return f"{now:016x}{_process_tag}{sequence:04x}{_random_bits(32):08x}"


def concurrent_run_error(
    thread_id: str, expected: str | None, found: str | None
) -> ConcurrentRunError:
    """The error for a lost compare-and-set on a thread's head."""
    return ConcurrentRunError(
        f"Thread '{thread_id}' moved on while this run was working (its head is now "
        f"{found!r}, this run started from {expected!r}); another run wrote to the same "
        "thread. Run one invocation per thread at a time, or retry after re-reading its state.",
        thread_id=thread_id,
    )


def chain_from_rows(
    rows: Iterable[CheckpointRecord], checkpoint_id: str, thread_id: str
) -> list[CheckpointRecord]:
    """The records to replay for `checkpoint_id`: its base snapshot first, itself last.

    `rows` may hold more than the chain (other branches); the walk follows
    parent ids from the checkpoint back to its base.
    """
    by_id = {row.checkpoint_id: row for row in rows}
    chain = []
    current = by_id.get(checkpoint_id)
    if current is None:
        raise DeserializationError(
            f"Checkpoint {checkpoint_id!r} of thread {thread_id!r} is not stored"
        )
    base = current.base_id
    while True:
        chain.append(current)
        if current.checkpoint_id == base:
            break
        parent = current.parent_id
        if parent is None or parent not in by_id:
            raise DeserializationError(
                f"Checkpoint {current.checkpoint_id!r} of thread {thread_id!r} lost its "
                f"parent {parent!r} before reaching its snapshot {base!r}; "
                "the store is damaged (was it pruned by hand?)"
            )
        current = by_id[parent]
        if len(chain) > len(by_id):
            raise DeserializationError(
                f"The parent links of checkpoint {checkpoint_id!r} of thread {thread_id!r} "
                f"form a loop that never reaches its snapshot {base!r}; the store is damaged"
            )
    chain.reverse()
    return chain


def kept_after_prune(
    rows: Iterable[tuple[str, str | None, str]], head: str, keep_last: int
) -> set[str]:
    """Ids that `prune` keeps: the head's newest `keep_last`, and the chains they replay.

    `rows` are (checkpoint_id, parent_id, base_id) of the thread's records.
    """
    parents: dict[str, tuple[str | None, str]] = {cid: (p, b) for cid, p, b in rows}
    keep: set[str] = set()
    current: str | None = head
    while current is not None and current in parents and len(keep) < max(keep_last, 1):
        keep.add(current)
        current = parents[current][0]
    for cid in list(keep):
        base = parents[cid][1]
        while cid != base:
            parent = parents[cid][0]
            if parent is None or parent not in parents:
                break
            cid = parent
            keep.add(cid)
    return keep


_ONE_WRITE: dict[tuple[type, str], bool] = {}
"""(checkpointer class, hook) -> `writes_leases_with_steps`, worked out once per class."""


class BaseCheckpointer(ABC):
    """Storage for checkpoints. Subclasses implement the sync methods; async ones follow.

    The async twins run the sync logic in a worker thread by default, so a
    backend has one implementation; a backend with a native async driver
    may override them.
    """

    lease_s: float = DEFAULT_LEASE_S
    """Seconds a thread's lease outlives its holder's last renewal (see `acquire_lease`)."""

    # -- writing ------------------------------------------------------------------

    @abstractmethod
    def put(
        self,
        record: CheckpointRecord,
        *,
        expected_head: str | None,
        messages: Mapping[str, bytes],
    ) -> None:
        """Store a step atomically: its new messages, the record, the thread's new head.

        Fails with ConcurrentRunError (storing nothing) unless the thread's
        head is still `expected_head` (None: the thread must not exist yet).
        Pending writes left against the record's parent are cleared.
        """

    def put_and_acquire(
        self,
        record: CheckpointRecord,
        *,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        run_id: str,
        owner: str,
        lease_s: float,
    ) -> ThreadLease | None:
        """Take the thread's lease for `run_id` of `owner` if it is free or expired (no
        takeover: see `acquire_lease`) and `put` a run's first write, as one write where
        the store can (`_put_and_acquire`).

        Returns None when both happened, or the holder when another run holds the
        thread (nothing stored). Raises ConcurrentRunError when the head moved:
        nothing stored and no lease taken. Otherwise it takes the lease, then puts
        (giving the lease back if the put fails).
        """
        if self.writes_leases_with_steps("_put_and_acquire"):
            return self._put_and_acquire(record, expected_head, messages, run_id, owner, lease_s)
        holder = self.acquire_lease(record.thread_id, run_id, owner, lease_s)
        if holder is not None:
            return holder
        try:
            self.put(record, expected_head=expected_head, messages=messages)
        except BaseException:
            with suppress(Exception):
                self.release_lease(record.thread_id, run_id, owner)
            raise
        return None

    def put_and_release(
        self,
        record: CheckpointRecord,
        *,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        run_id: str,
        owner: str,
    ) -> bool:
        """`put` a run's last step and, where the store can make it one write
        (`_put_and_release`), give back the lease `run_id` of `owner` holds in the same
        transaction: the step then costs one write transaction instead of two.

        Returns whether the lease was given back; otherwise it only puts (False),
        and the run then calls `release_lease` itself.
        """
        if self.writes_leases_with_steps("_put_and_release"):
            return self._put_and_release(record, expected_head, messages, run_id, owner)
        self.put(record, expected_head=expected_head, messages=messages)
        return False

    def writes_leases_with_steps(self, hook: str) -> bool:
        """Whether this store does `hook` (`_put_and_acquire`, `_put_and_release`) in one
        write: its class, or a base, has one next to the `put` it uses. A subclass that
        overrides `put` gets the two-write way, so its `put` sees every step."""
        known = _ONE_WRITE.get((type(self), hook))
        if known is None:
            writer = next(c for c in type(self).__mro__ if hook in c.__dict__)
            known = writer is not BaseCheckpointer and type(self).put is writer.put  # type: ignore[attr-defined]
            _ONE_WRITE[(type(self), hook)] = known
        return known

    def _put_and_acquire(
        self,
        record: CheckpointRecord,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        run_id: str,
        owner: str,
        lease_s: float,
    ) -> ThreadLease | None:
        """`put_and_acquire` as one write: a backend that can overrides this."""
        raise NotImplementedError

    def _put_and_release(
        self,
        record: CheckpointRecord,
        expected_head: str | None,
        messages: Mapping[str, bytes],
        run_id: str,
        owner: str,
    ) -> bool:
        """`put_and_release` as one write: a backend that can overrides this."""
        raise NotImplementedError

    @abstractmethod
    def put_pending(
        self, thread_id: str, checkpoint_id: str, writes: Sequence[PendingWrite]
    ) -> None:
        """Keep what the finished tasks of an unfinished step after `checkpoint_id` wrote."""

    # -- reading ------------------------------------------------------------------

    @abstractmethod
    def head(self, thread_id: str) -> str | None:
        """The id of the thread's latest checkpoint, or None for an unknown thread."""

    def head_and_pending(self, thread_id: str) -> tuple[str | None, list[PendingWrite]]:
        """`head`, and the pending writes left against it, as one read where the store can:
        what a run continuing a thread needs before anything else."""
        head = self.head(thread_id)
        return head, [] if head is None else self.pending(thread_id, head)

    @abstractmethod
    def get(self, thread_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        """One record, or None."""

    @abstractmethod
    def chain(self, thread_id: str, checkpoint_id: str) -> list[CheckpointRecord]:
        """The records to replay for a checkpoint: its base snapshot first, itself last."""

    @abstractmethod
    def messages(self, thread_id: str, keys: Iterable[str]) -> dict[str, bytes]:
        """Stored messages by key (a key missing from the result is not stored)."""

    @abstractmethod
    def pending(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        """The pending writes left against `checkpoint_id`, by task index."""

    @abstractmethod
    def history(
        self, thread_id: str, *, limit: int | None = None, before: str | None = None
    ) -> list[CheckpointRecord]:
        """The thread's records, newest first; `before` excludes that id and newer ones."""

    @abstractmethod
    def threads(self) -> list[str]:
        """Every thread id, sorted."""

    # -- leases: one run per thread ---------------------------------------------------

    @abstractmethod
    def acquire_lease(
        self,
        thread_id: str,
        run_id: str,
        owner: str,
        lease_s: float,
        *,
        takeover: ThreadLease | None = None,
    ) -> ThreadLease | None:
        """Take the thread for `run_id` of `owner` for `lease_s` seconds, atomically.

        Returns None when taken: the thread had no lease, its lease expired
        (by the store's own clock where it has one), or it is still exactly
        `takeover` (the same run of the same owner: a holder the caller found
        dead). Otherwise nothing changes and the live lease that holds the
        thread is returned. A lease is matched by run *and* owner: a run id
        can come back (a task queue delivering one run twice), a process
        cannot. A run never re-takes its own lease: a second delivery of the
        same run is refused like any other run.
        """

    @abstractmethod
    def renew_lease(self, thread_id: str, run_id: str, owner: str, lease_s: float) -> bool:
        """Push the lease `lease_s` seconds on; False if `run_id` of `owner` no longer holds it."""

    @abstractmethod
    def release_lease(self, thread_id: str, run_id: str, owner: str) -> None:
        """Give the thread back, if `run_id` of `owner` still holds it (else do nothing)."""

    @abstractmethod
    def read_lease(self, thread_id: str) -> ThreadLease | None:
        """The thread's unexpired lease, or None when no run holds it."""

    # -- housekeeping -------------------------------------------------------------

    @abstractmethod
    def delete_thread(self, thread_id: str) -> None:
        """Forget a thread: its records, messages and pending writes."""

    @abstractmethod
    def prune(self, thread_id: str, keep_last: int) -> int:
        """Drop all but the newest `keep_last` checkpoints of the head's branch.

        The records the kept ones replay from (back to their snapshot) stay
        too, so every kept checkpoint still rebuilds exactly; other branches
        go. Messages are left to `forget_messages`, since a backend cannot see
        which ones the kept records use. Returns the number of records removed.
        """

    @abstractmethod
    def forget_messages(self, thread_id: str, keep: set[str]) -> int:
        """Delete the thread's stored messages whose keys are not in `keep`; how many went."""

    def compact(self) -> None:  # noqa: B027 - optional: most stores have nothing to do
        """Give freed space back to the file system (a no-op where there is none)."""

    def close(self) -> None:  # noqa: B027 - optional: most stores hold nothing open
        """Release connections and files."""

    def __enter__(self) -> BaseCheckpointer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- async twins: the same logic, off the event loop ----------------------------

    async def aput(
        self,
        record: CheckpointRecord,
        *,
        expected_head: str | None,
        messages: Mapping[str, bytes],
    ) -> None:
        await asyncio.to_thread(self.put, record, expected_head=expected_head, messages=messages)

    async def aput_pending(
        self, thread_id: str, checkpoint_id: str, writes: Sequence[PendingWrite]
    ) -> None:
        await asyncio.to_thread(self.put_pending, thread_id, checkpoint_id, writes)

    async def ahead(self, thread_id: str) -> str | None:
        return await asyncio.to_thread(self.head, thread_id)

    async def aget(self, thread_id: str, checkpoint_id: str) -> CheckpointRecord | None:
        return await asyncio.to_thread(self.get, thread_id, checkpoint_id)

    async def achain(self, thread_id: str, checkpoint_id: str) -> list[CheckpointRecord]:
        return await asyncio.to_thread(self.chain, thread_id, checkpoint_id)

    async def amessages(self, thread_id: str, keys: Iterable[str]) -> dict[str, bytes]:
        return await asyncio.to_thread(self.messages, thread_id, list(keys))

    async def apending(self, thread_id: str, checkpoint_id: str) -> list[PendingWrite]:
        return await asyncio.to_thread(self.pending, thread_id, checkpoint_id)

    async def aacquire_lease(
        self,
        thread_id: str,
        run_id: str,
        owner: str,
        lease_s: float,
        *,
        takeover: ThreadLease | None = None,
    ) -> ThreadLease | None:
        return await asyncio.to_thread(
            self.acquire_lease, thread_id, run_id, owner, lease_s, takeover=takeover
        )

    async def arelease_lease(self, thread_id: str, run_id: str, owner: str) -> None:
        await asyncio.to_thread(self.release_lease, thread_id, run_id, owner)

    async def aread_lease(self, thread_id: str) -> ThreadLease | None:
        return await asyncio.to_thread(self.read_lease, thread_id)
