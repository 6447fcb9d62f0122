"""The sync API as a thin bridge over the async run loop.

Called from plain code, a run drives a private event loop kept per thread
(no thread hop, no loop setup per call). A graph whose code is all sync
goes one better: its run coroutine is stepped directly, with no Task, and
the loop runs only while the run waits on something (parallel tasks in
threads, a retry's sleep). Called from inside a running
event loop (Jupyter, an async handler calling sync code, or a sync node
that invokes another graph), the caller's loop cannot be re-entered, so the
run gets a loop on a thread of its own for as long as it lasts.
"""

from __future__ import annotations

import asyncio
import contextvars
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
    return asyncio._get_running_loop() is not None  # no RuntimeError raised per sync call


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


def run_sync(coro: Coroutine[Any, Any, T], *, direct: bool = False) -> T:
    """Run `coro` to completion from sync code, whether or not a loop is running here.

    `direct` steps the coroutine without a Task (see `_drive`): only for
    coroutines that run no user async code, which may expect a current Task
    (`asyncio.timeout`, anyio).
    """
    if not _in_running_loop():
        loop = _thread_loop()
        if direct:
            return contextvars.copy_context().run(_drive, loop, coro)
        return loop.run_until_complete(coro)
    bridge = _LoopThread()
    try:
        return bridge.run(coro)
    finally:
        bridge.stop()


def _drive(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    """Step `coro` by hand; when it waits on a future, run the loop until that is done.

    A run that never waits (one sync node a step) then costs no Task, no
    loop start and no callbacks. The loop is this thread's "running loop"
    meanwhile, so `asyncio.gather`, `create_task` and `to_thread` inside
    work as usual; like a Task, it runs in a copy of the caller's context.
    """
    events = asyncio.events
    events._set_running_loop(loop)
    try:
        while True:
            try:
                waited = coro.send(None)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]  # the coroutine's result
            if waited is None:  # a bare yield (asyncio.sleep(0)): just go on
                continue
            waited._asyncio_future_blocking = False  # what a Task does before resuming
            events._set_running_loop(None)
            try:
                loop.run_until_complete(waited)
            except BaseException:
                if not waited.done():
                    coro.close()
                    raise
                # the future's own error: the coroutine gets it when it resumes
            finally:
                events._set_running_loop(loop)
    finally:
        events._set_running_loop(None)


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
