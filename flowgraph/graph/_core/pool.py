"""Worker threads for sync nodes, with hand-offs that cost little in bulk.

`asyncio.to_thread` pays, per call, an executor submission, two chained
futures and one wake-up of the event loop. A step that fans out to
hundreds of sync nodes, or many runs each stepping a sync node, pays that
hundreds of times. Here a submission is a queue append (a worker is woken
only if one is idle, a thread started only if none is), and finished
calls are handed back to each event loop in batches: one wake-up of the
loop delivers every result that arrived since the last one.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import os
import threading
import weakref
from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar

__all__ = ["call_store", "finish_off_loop", "run_in_thread"]

T = TypeVar("T")

_Job = tuple["_Inbox", "asyncio.Future[Any]", contextvars.Context, Callable[[Any], Any], Any]


class _Inbox:
    """Results bound for one event loop; one loop callback delivers all that are waiting."""

    __slots__ = ("items", "lock", "loop", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = weakref.ref(loop)
        """Weak: the inbox is the loop's value in `_inboxes`, and must not keep it alive."""
        self.lock = threading.Lock()
        self.items: list[tuple[asyncio.Future[Any], bool, Any]] = []
        self.scheduled = False

    def put(self, future: asyncio.Future[Any], ok: bool, value: Any) -> None:
        with self.lock:
            self.items.append((future, ok, value))
            if self.scheduled:
                return
            self.scheduled = True
        loop = self.loop()
        try:
            if loop is None:
                raise RuntimeError("the event loop is gone")
            loop.call_soon_threadsafe(self.deliver)
        except RuntimeError:  # the loop was closed: nobody waits for these results
            with self.lock:
                self.items.clear()
                self.scheduled = False

    def deliver(self) -> None:
        with self.lock:
            items, self.items = self.items, []
            self.scheduled = False
        for future, ok, value in items:
            if future.done():  # cancelled while the node ran
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)


class _Pool:
    """At most `size` daemon threads taking jobs from one queue."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._jobs: collections.deque[_Job] = collections.deque()
        self._threads = 0
        self._idle = 0
        """Workers waiting for a job and not yet woken for one."""

    def submit(self, job: _Job) -> None:
        with self._cond:
            self._jobs.append(job)
            if self._idle:
                self._idle -= 1
                self._cond.notify()
                return
            if self._threads >= self.size:
                return  # a busy worker takes it next
            self._threads += 1
        threading.Thread(target=self._work, name="flowgraph-node", daemon=True).start()

    def _work(self) -> None:
        cond = self._cond
        jobs = self._jobs
        while True:
            with cond:
                while not jobs:
                    self._idle += 1
                    cond.wait()
                inbox, future, context, fn, arg = jobs.popleft()
            try:
                value, ok = context.run(fn, arg), True
            except BaseException as exc:  # handed to the awaiting task, which raises it
                value, ok = exc, False
            inbox.put(future, ok, value)
            del inbox, future, context, fn, arg, value


_POOL = _Pool(min(32, (os.cpu_count() or 1) + 4))
"""As many threads as asyncio's default executor would use."""
_Loop = asyncio.AbstractEventLoop
_inboxes: weakref.WeakKeyDictionary[_Loop, _Inbox] = weakref.WeakKeyDictionary()
_inboxes_lock = threading.Lock()


def _after_fork() -> None:
    """A forked child has none of the parent's threads, and maybe a lock a worker held."""
    global _inboxes_lock
    _POOL._reset()
    _inboxes.clear()
    _inboxes_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def _inbox_of(loop: asyncio.AbstractEventLoop) -> _Inbox:
    inbox = _inboxes.get(loop)
    if inbox is None:
        with _inboxes_lock:
            inbox = _inboxes.get(loop)
            if inbox is None:
                inbox = _inboxes[loop] = _Inbox(loop)
    return inbox


def run_in_thread(fn: Callable[[Any], Any], arg: Any) -> asyncio.Future[Any]:
    """`fn(arg)` on a worker thread, in a copy of the current context; await the result."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    _POOL.submit((_inbox_of(loop), future, contextvars.copy_context(), fn, arg))
    return future


async def finish_off_loop(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker thread; a cancelled caller still waits for it to end.

    A thread cannot be stopped: a store write it makes after its run was
    cancelled would land after the run gave its thread back. So the
    cancellation reaches the caller only once the call has ended.
    """
    job = asyncio.ensure_future(asyncio.to_thread(fn, *args, **kwargs))
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        with suppress(BaseException):  # the cancellation is what the caller gets
            await job
        raise


async def call_store(direct: bool, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """A checkpointer call: from the run loop itself when `direct` (the sync API's own
    loop, or a store that never blocks), else on a worker thread the caller's loop waits
    for (`finish_off_loop`: a cancelled run still waits for its write to end)."""
    if direct:
        return fn(*args, **kwargs)
    return await finish_off_loop(fn, *args, **kwargs)
