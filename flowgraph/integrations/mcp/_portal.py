"""The event loop an MCPClient's sessions live on: one daemon thread per client.

An MCP session is a set of anyio tasks and streams bound to the loop that
opened it, while the tools are called from whatever loop a run uses: the
caller's own loop for `ainvoke`, a per-thread private loop for a sync
`invoke`, a fresh loop for every `asyncio.run`. Sessions kept per caller
loop would be reopened (a server process started again) whenever a sync
run's loop changes, and would die with a loop that `asyncio.run` closes. So
the sessions stay on one loop the client owns, and every call hops to it:
a thread hand-off costs microseconds, an MCP round trip milliseconds.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["Portal"]

T = TypeVar("T")


class Portal:
    """A private event loop on a daemon thread, and the two ways into it."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    @property
    def is_current(self) -> bool:
        """True when called from the portal's own thread (waiting there would deadlock)."""
        return threading.get_ident() == self._thread.ident

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` on the portal loop from any other loop.

        Cancelling the caller (a ToolNode timeout, a cancelled run) cancels
        the coroutine on the portal loop too.
        """
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return await asyncio.wrap_future(future)

    def run_sync(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the portal loop and block this thread until it is done."""
        if self.is_current:
            coro.close()
            raise RuntimeError("A blocking MCPClient call was made from its own event loop")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        """Stop the loop and its thread (the caller has closed what ran on it)."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if not self.is_current:
            self._thread.join()
            self.loop.close()
