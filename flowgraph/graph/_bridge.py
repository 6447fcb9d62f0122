"""The sync API as a thin bridge over the async run loop.

Called from plain code, a run drives a private event loop kept per thread
(no thread hop, no loop setup per call). Called from inside a running
event loop (Jupyter, an async handler calling sync code, or a sync node
that invokes another graph), the caller's loop cannot be re-entered, so the
run gets a loop on a thread of its own for as long as it lasts.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, TypeVar

__all__ = ["iterate_sync", "run_sync"]

T = TypeVar("T")

_local = threading.local()


class _ThreadLoop:
    """A thread's private loop, closed when the thread ends and its locals are dropped."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def __del__(self) -> None:
        if not self.loop.is_closed() and not self.loop.is_running():
            self.loop.close()


def _thread_loop() -> asyncio.AbstractEventLoop:
    holder: _ThreadLoop | None = getattr(_local, "holder", None)
    if holder is None or holder.loop.is_closed():
        holder = _local.holder = _ThreadLoop()
    return holder.loop


def _in_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _LoopThread:
    """An event loop on its own daemon thread, for one bridged call or stream."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="flowgraph-sync-bridge", daemon=True
        )
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion from sync code, whether or not a loop is running here."""
    if not _in_running_loop():
        return _thread_loop().run_until_complete(coro)
    bridge = _LoopThread()
    try:
        return bridge.run(coro)
    finally:
        bridge.stop()


def iterate_sync(
    stream: AsyncIterator[T], on_close: Callable[[], object] | None = None
) -> Iterator[T]:
    """Iterate an async iterator from sync code; closing the iterator closes the stream.

    Every step of one iteration runs on the same loop, as an async
    generator requires. `on_close` runs first when the reader stops, before
    the loop gets to run anything else.
    """
    bridge = _LoopThread() if _in_running_loop() else None
    run = bridge.run if bridge is not None else _thread_loop().run_until_complete
    try:
        while True:
            try:
                yield run(_anext(stream))
            except StopAsyncIteration:
                return
    finally:
        if on_close is not None:
            on_close()
        aclose = getattr(stream, "aclose", None)
        try:
            if aclose is not None:
                run(aclose())
        finally:
            if bridge is not None:
                bridge.stop()


async def _anext(stream: AsyncIterator[T]) -> T:
    return await stream.__anext__()
