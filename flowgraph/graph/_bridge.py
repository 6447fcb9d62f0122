"""The sync API as a thin bridge over the async run loop.

Called from plain code, a run drives a private event loop kept per thread
(no thread hop, no loop setup per call). Called from inside a running
event loop (Jupyter, an async web handler calling sync code), it runs on a
background loop thread instead, since the caller's loop cannot be re-entered.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any, TypeVar

__all__ = ["iterate_sync", "run_sync"]

T = TypeVar("T")

_local = threading.local()
_background_lock = threading.Lock()
_background: asyncio.AbstractEventLoop | None = None


def _thread_loop() -> asyncio.AbstractEventLoop:
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = _local.loop = asyncio.new_event_loop()
    return loop


def _background_loop() -> asyncio.AbstractEventLoop:
    global _background
    with _background_lock:
        if _background is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="flowgraph-sync-bridge", daemon=True
            )
            thread.start()
            _background = loop
        return _background


def _in_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion from sync code, whether or not a loop is running here."""
    if not _in_running_loop():
        return _thread_loop().run_until_complete(coro)
    return asyncio.run_coroutine_threadsafe(coro, _background_loop()).result()


def iterate_sync(stream: AsyncIterator[T]) -> Iterator[T]:
    """Iterate an async iterator from sync code; closing the iterator closes the stream."""
    step = stream.__anext__
    try:
        while True:
            try:
                yield run_sync(_next(step))
            except StopAsyncIteration:
                return
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            run_sync(aclose())


async def _next(step: Any) -> Any:
    return await step()
