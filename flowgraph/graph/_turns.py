"""Taking turns on a thread: one run at a time per thread, within this process.

A run on a thread another run of this process holds fails at once with
ConcurrentRunError, or waits its turn if it asked to. Runs in other
processes are kept apart by the compare-and-set on the thread's head at
every write.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from flowgraph.errors import ConcurrentRunError

__all__ = ["ThreadTurns"]


class _Turn:
    """The lock of one thread; alive while some run holds or waits for it."""

    __slots__ = ("__weakref__", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()


class ThreadTurns:
    """One lock per thread id, shared by the runs of one compiled graph."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        """False for a graph without a checkpointer: its runs share nothing to take turns on."""
        self._turns: weakref.WeakValueDictionary[str, _Turn] = weakref.WeakValueDictionary()
        self._guard = threading.Lock()

    def _turn_of(self, thread_id: str) -> _Turn:
        with self._guard:
            turn = self._turns.get(thread_id)
            if turn is None:
                turn = self._turns[thread_id] = _Turn()
            return turn

    @asynccontextmanager
    async def turn(self, thread_id: str | None, wait: bool | float) -> AsyncIterator[None]:
        """Hold the thread for the length of a run (nothing to hold without a thread id)."""
        if thread_id is None or not self.enabled:
            yield
            return
        turn = self._turn_of(thread_id)
        if wait is False and not turn.lock.acquire(blocking=False):
            raise ConcurrentRunError(
                f"Another run of this process is working on thread '{thread_id}'; "
                "run one invocation per thread at a time, or pass wait=True to wait your turn",
                thread_id=thread_id,
            )
        deadline = None if wait is True or wait is False else time.monotonic() + float(wait)
        pause = 0.001
        # polling keeps the wait cancellable: a cancelled run never ends up holding the lock
        while wait is not False and not turn.lock.acquire(blocking=False):
            if deadline is not None and time.monotonic() >= deadline:
                raise ConcurrentRunError(
                    f"Thread '{thread_id}' was still busy after waiting {float(wait):g} s for "
                    "another run of this process; wait longer or try again later",
                    thread_id=thread_id,
                )
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)
        try:
            yield
        finally:
            turn.lock.release()
