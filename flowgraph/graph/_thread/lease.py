"""One writer per thread: a run holds its thread's lease from its input's write at the latest.

`claim` takes the lease in the checkpointer (so it holds across processes
and machines) or fails at once with ConcurrentRunError naming the holder;
with `wait`, it waits for the holder to finish instead. A holder that is a
dead process of this machine is taken over at once; one elsewhere only
after its lease ran `lease_s` without renewal.

The protocol, write by write (every write is a compare-and-set on the head
the run last read or wrote, so a failed one stores nothing and leaves the
last checkpoint as it was):

- **A fresh input** (no resume, Command, fork or caller's run id) on a store
  that can do it is read without the lease: the run loads the head, builds
  its input step on it, and the input's write takes the lease and moves the
  head in one atomic step (`enter_claim`, then `put_and_acquire`).
- **Its write finds the thread held**: nothing is stored; the run claims it
  the usual way (wait, take over a dead holder, or refuse naming the holder).
- **Its write finds the head moved** (another run's turn finished between
  this run's read and its write): nothing is stored; the run starts over
  lease first and reads the head again, so its input lands after that turn,
  as if the call had come a moment later. An input the thread already holds
  (its messages, with their own ids, all there with the same content) is not
  a new turn: the run resumes instead, a no-op on a finished turn
  (`_engine.setup._redelivered`). Without that rule a worker that read the state,
  decided to send turn k and lost the race re-ran turn k on top of the
  winner's: the agent answered the old turn again and its tools ran twice.
- **A resume, a Command, a fork, a caller's run id**: lease first (`claim`),
  then the head is read under it; the write's compare-and-set fails only if
  the lease was lost meanwhile.
- **The last step** gives the lease back in its own write (`put_and_release`)
  where the store can; otherwise `release` follows the write.

While a run lives, one keeper thread per process renews its lease every
third of `lease_s`, whatever the run is doing (a long sync node, a model
stream); a renewal that fails (the store unreachable) is tried again after
a sixth, so two tries fit before the lease runs out. The keeper marks the
lease lost if the store says another run took it: the run then stops at
its next step with ConcurrentRunError, and its next write's compare-and-set
would refuse it anyway. It marks it lost too when every try failed until
the lease ran out: from then on the store may give the thread to another
run, so this one must not start another step.

`release_thread` gives back a claim only while no run adopted it: it
withdraws the claim first (a run with that id then finds the thread busy,
or waits), so a run never adopts a lease that is being given back.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TypeVar

from flowgraph.checkpoint._lease import (
    DEFAULT_LEASE_S,
    ThreadLease,
    owner_is_gone,
    process_owner,
)
from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.errors import ConcurrentRunError
from flowgraph.graph._core.pool import call_store

__all__ = [
    "LeaseHeld",
    "RunLease",
    "active_run",
    "claim",
    "claim_taken",
    "drop_claim",
    "enter_claim",
    "holds",
    "release",
    "withdraw_reserved",
]

T = TypeVar("T")


@dataclass(eq=False, slots=True)
class RunLease:
    """The lease one run holds on one thread of one store."""

    checkpointer: BaseCheckpointer
    thread_id: str
    run_id: str
    lease_s: float
    reserved: bool = False
    """Claimed ahead of its run (`claim_thread`); the run with this id adopts it."""
    active: bool = False
    """The store granted it (False while the claim is on its way)."""
    lost: bool = False
    """The store gave the thread to another run (this one looked dead to it)."""
    released: bool = False
    """Given back already, by the store write of the run's last step (`put_and_release`)."""
    renewed_at: float = field(default_factory=time.monotonic)
    """When the keeper last tried to renew it (monotonic; moved back after a failed try)."""
    expires_at: float = math.inf
    """When the store's lease runs out unless renewed (monotonic, from the last success)."""

    def check(self) -> None:
        """Raise if the lease was lost: the run must not start another step."""
        if self.lost:
            raise ConcurrentRunError(
                f"Run '{self.run_id}' lost thread '{self.thread_id}' to another run (its lease "
                f"was not renewed for {self.lease_s:g} s, so it looked dead); it stopped before "
                "its next step. Resume the thread once the other run is done.",
                thread_id=self.thread_id,
                run_id=self.run_id,
            )


class _Registry:
    """The leases this process holds, and the thread that renews them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.wake = threading.Condition(self.lock)
        self.by_thread: dict[tuple[int, str], RunLease] = {}
        """(id of the store, thread id) -> the lease a run of this process holds there."""
        self.keeper: threading.Thread | None = None
        self.wakes_at = -math.inf
        """When the keeper's sleep ends (monotonic); -inf while it is awake, and will look at
        every lease before it sleeps again."""

    def holds(self, thread_id: str, run_id: str) -> bool:
        """Whether a run of this process holds `thread_id` as `run_id` (in any store)."""
        with self.lock:
            return any(
                lease.thread_id == thread_id and lease.run_id == run_id
                for lease in self.by_thread.values()
            )

    def started(self, lease: RunLease) -> None:
        """The store granted `lease`: renew it from now on."""
        with self.lock:
            lease.active = True
            lease.renewed_at = time.monotonic()
            lease.expires_at = lease.renewed_at + lease.lease_s
            if self.keeper is None or not self.keeper.is_alive():
                self.keeper = threading.Thread(
                    target=self._renew_forever, name="flowgraph-lease-keeper", daemon=True
                )
                self.keeper.start()
            elif lease.renewed_at + lease.lease_s / 3 < self.wakes_at:
                # only a lease due before the keeper wakes needs it woken: waking it for
                # every run cost a thread switch and a GIL hand-over (~10 µs a ReAct step)
                self.wake.notify()

    def remove(self, lease: RunLease) -> None:
        with self.lock:
            key = (id(lease.checkpointer), lease.thread_id)
            if self.by_thread.get(key) is lease:
                del self.by_thread[key]

    def _renew_forever(self) -> None:
        while True:
            with self.lock:
                leases = [lease for lease in self.by_thread.values() if lease.active]
                now = time.monotonic()
                due = [lease for lease in leases if now >= lease.renewed_at + lease.lease_s / 3]
                if not due:
                    waits = [lease.renewed_at + lease.lease_s / 3 - now for lease in leases]
                    # with no lease, look again after a default lease's third anyway: a run
                    # that starts meanwhile with a default lease then need not wake it
                    timeout = min(waits, default=DEFAULT_LEASE_S / 3)
                    self.wakes_at = now + timeout
                    self.wake.wait(timeout=timeout)
                    self.wakes_at = -math.inf
                    continue
            for lease in due:
                _renew(lease)


def _renew(lease: RunLease) -> None:
    asked = time.monotonic()
    try:
        kept = lease.checkpointer.renew_lease(
            lease.thread_id, lease.run_id, process_owner(), lease.lease_s
        )
    except Exception:  # the store is unreachable now: try again after a sixth
        now = time.monotonic()
        lease.renewed_at = now - lease.lease_s / 6
        if now >= lease.expires_at:  # ran out: the store may give it to another run now
            lease.lost = True
            _registry.remove(lease)
        return
    lease.renewed_at = time.monotonic()
    lease.expires_at = asked + lease.lease_s
    if not kept:
        lease.lost = True
        _registry.remove(lease)


_registry = _Registry()


def _after_fork_in_child() -> None:
    # the parent's leases are the parent's; the keeper thread did not survive the fork
    global _registry
    _registry = _Registry()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _is_dead(holder: ThreadLease) -> bool:
    """A holder that can be taken over now: a gone process of this machine, or this
    process with no run holding that lease any more (a run that could not release it)."""
    if holder.owner == process_owner():
        return not _registry.holds(holder.thread_id, holder.run_id)
    return owner_is_gone(holder.owner)


def _busy(thread_id: str, holder: str | None, waited: float | None) -> ConcurrentRunError:
    who = f"run '{holder}'" if holder else "another run"
    if waited is None:
        advice = "wait for it to finish (invoke(..., wait=True) waits), or resume the thread later"
        return ConcurrentRunError(
            f"Thread '{thread_id}' is busy: {who} is working on it, and a thread takes one run "
            f"at a time. This call stored and ran nothing; {advice}.",
            thread_id=thread_id,
            run_id=holder,
        )
    return ConcurrentRunError(
        f"Thread '{thread_id}' was still busy ({who}) after waiting {waited:g} s; this call "
        "stored and ran nothing. Wait longer, or try again later.",
        thread_id=thread_id,
        run_id=holder,
    )


async def claim(
    checkpointer: BaseCheckpointer,
    thread_id: str,
    run_id: str,
    *,
    wait: bool | float = False,
    direct: bool = False,
    reserve: bool = False,
) -> RunLease:
    """Take `thread_id` for `run_id`, or raise ConcurrentRunError (after `wait`, if given).

    A lease this process reserved for `run_id` (see `reserve`) is adopted.
    `direct` calls the store from this thread (the sync API, or a store that
    never blocks); otherwise its calls go to a worker thread.
    """
    deadline = None if wait is True or wait is False else time.monotonic() + float(wait)
    pause = 0.001
    while True:
        lease, holder_id = _enter(checkpointer, thread_id, run_id, reserve)
        if lease is not None:
            try:
                holder_id = await _acquire(lease, direct)
            except BaseException:
                # cancelled (or failed) with the answer unknown: never leave the lease held
                _registry.remove(lease)
                with suppress(Exception):
                    checkpointer.release_lease(thread_id, run_id, process_owner())
                raise
            if holder_id is None:
                _registry.started(lease)
                return lease
            _registry.remove(lease)
        elif holder_id is None:  # adopted: reserved by this process for this run
            return _registry.by_thread[(id(checkpointer), thread_id)]
        if wait is False:
            raise _busy(thread_id, holder_id, None)
        if deadline is not None and time.monotonic() >= deadline:
            raise _busy(thread_id, holder_id, float(wait))
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.05)


class LeaseHeld(Exception):
    """A run's first write found its thread held by another run: nothing was stored.

    The run then claims the thread the usual way (`claim`: waiting, taking over
    a dead holder, or refusing with ConcurrentRunError naming the holder).
    """

    def __init__(self, holder: ThreadLease) -> None:
        super().__init__(holder.run_id)
        self.holder = holder


def enter_claim(checkpointer: BaseCheckpointer, thread_id: str, run_id: str) -> RunLease | None:
    """Register a claim for the run's first write to take to the store with its input
    (`put_and_acquire`); None if a run of this process holds the thread (`claim` it)."""
    lease, _ = _enter(checkpointer, thread_id, run_id, False)
    return lease


def claim_taken(lease: RunLease) -> None:
    """The first write took the lease (see `enter_claim`): renew it from now on."""
    _registry.started(lease)


def drop_claim(lease: RunLease, *, stored: bool) -> None:
    """Withdraw a claim `enter_claim` registered; `stored`: the store may have granted it
    (a write cut off, or a failure after it), so give it back there too, from this thread
    as `claim` does: the caller may be a cancelled task."""
    _registry.remove(lease)
    if stored:
        with suppress(Exception):
            lease.checkpointer.release_lease(lease.thread_id, lease.run_id, process_owner())


def _enter(
    checkpointer: BaseCheckpointer, thread_id: str, run_id: str, reserve: bool
) -> tuple[RunLease | None, str | None]:
    """Register this process's claim before asking the store, so that a run of this
    process is never judged dead by a sibling while its claim is on the way.

    Returns (the new claim, None) to ask the store with; (None, holder) when a run of
    this process holds the thread; (None, None) when a reserved lease was adopted.
    """
    key = (id(checkpointer), thread_id)
    with _registry.lock:
        mine = _registry.by_thread.get(key)
        if mine is None:
            lease = RunLease(checkpointer, thread_id, run_id, checkpointer.lease_s, reserve)
            _registry.by_thread[key] = lease
            return lease, None
        if mine.reserved and mine.run_id == run_id and not reserve and mine.active:
            mine.reserved = False
            return None, None
        return None, mine.run_id


async def _acquire(lease: RunLease, direct: bool) -> str | None:
    """Ask the store for the lease, taking over a dead holder; the live holder's run id."""
    store, owner = lease.checkpointer, process_owner()
    args = (lease.thread_id, lease.run_id, owner, lease.lease_s)
    holder = await call_store(direct, store.acquire_lease, *args)
    if holder is not None and _is_dead(holder):
        holder = await call_store(direct, store.acquire_lease, *args, takeover=holder)
    return None if holder is None else holder.run_id


async def release(lease: RunLease, *, direct: bool = False) -> None:
    """Give the thread back (a lost lease is not ours to give back)."""
    _registry.remove(lease)
    if not lease.lost and not lease.released:
        await call_store(
            direct,
            lease.checkpointer.release_lease,
            lease.thread_id,
            lease.run_id,
            process_owner(),
        )


def active_run(checkpointer: BaseCheckpointer, thread_id: str) -> str | None:
    """The run holding `thread_id` now, or None (a dead holder holds nothing)."""
    holder = checkpointer.read_lease(thread_id)
    if holder is None or _is_dead(holder):
        return None
    return holder.run_id


def withdraw_reserved(
    checkpointer: BaseCheckpointer, thread_id: str, run_id: str
) -> RunLease | None:
    """The lease `claim(..., reserve=True)` took for `run_id`, withdrawn for `release`;
    None if a run adopted it (or there is none). Atomic with adoption: once withdrawn,
    a run with that id finds the thread busy until `release` has given it back."""
    with _registry.lock:
        lease = _registry.by_thread.get((id(checkpointer), thread_id))
        if lease is None or not lease.reserved or not lease.active or lease.run_id != run_id:
            return None
        lease.reserved = False
        return lease


def holds(checkpointer: BaseCheckpointer, thread_id: str, run_id: str) -> bool:
    """Whether this process holds `thread_id` of `checkpointer` as `run_id` (a run, or a
    lease `claim_thread` took), granted and not lost."""
    with _registry.lock:
        lease = _registry.by_thread.get((id(checkpointer), thread_id))
    return lease is not None and lease.run_id == run_id and lease.active and not lease.lost
