"""One run from request to end: take the thread's lease, set the run up, loop, give it back.

Every entry point (`invoke`, `stream` and their async twins, a graph used
as a node of another) hands its `RunOptions` here; the facade only turns
the caller's arguments into them and the finished `Run` into a result.
The protocol's rules (when the input's write takes the lease with it, and
what a run that finds the head moved does) are in `_thread.lease`.
"""

from __future__ import annotations

import uuid
from contextvars import Token
from typing import TYPE_CHECKING, Any

import flowgraph._hooks as _hooks
from flowgraph._context import bind_store, current_run, current_store, current_task
from flowgraph.errors import ConcurrentRunError
from flowgraph.graph._core.types import START, Command
from flowgraph.graph._engine.loop import run_loop
from flowgraph.graph._engine.setup import RunOptions, prepare_run
from flowgraph.graph._engine.subgraph import stream_from_caller
from flowgraph.graph._thread.lease import LeaseHeld, drop_claim, release
from flowgraph.graph._thread.opening import ThreadRequest, open_thread

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import BaseCheckpointer
    from flowgraph.graph._engine.run import Engine, Run
    from flowgraph.graph._thread.replay import ThreadCache

__all__ = ["direct_store_calls", "execute"]


async def execute(
    engine: Engine,
    checkpointer: BaseCheckpointer | None,
    input: Any,
    options: RunOptions,
    *,
    cache: ThreadCache | None,
    store: Any,
    name: str,
) -> Run:
    """One run, watched by the observer (tracing) when one is set."""
    observer = _hooks.observer
    if observer is None:
        return await _leased(engine, checkpointer, input, options, cache, store)
    seen = observer.run_started(name, options.thread_id, options.run_id)
    try:
        run = await _leased(engine, checkpointer, input, options, cache, store)
    except BaseException as exc:
        seen.end(error=exc)
        raise
    seen.end(run)
    return run


def direct_store_calls(checkpointer: BaseCheckpointer | None, options: RunOptions) -> bool:
    """Whether the run calls its store from the run loop's own thread."""
    return options.inline_sync or getattr(checkpointer, "is_nonblocking", False)


async def _leased(
    engine: Engine,
    checkpointer: BaseCheckpointer | None,
    input: Any,
    options: RunOptions,
    cache: ThreadCache | None,
    store: Any,
) -> Run:
    """One run, holding its thread's lease (if it has a thread) from start to end.

    The run's store and config reach its nodes through context variables,
    set here only when there is something to set (or an outer run's to hide).
    """
    bound = None
    if store is not None or options.info is not None or current_run.get() is not None:
        bound = _bind(store, options)
    if options.sink is None and current_task.get() is not None:
        stream_from_caller(options)  # called inside a node of another run
    try:
        if checkpointer is None or options.thread_id is None:
            run = await prepare_run(engine, checkpointer, input, options)
            await run_loop(engine, run)
            return run
        claims = False  # a caller's run id may be a retried delivery: it claims first
        if options.run_id is None:
            options.run_id = uuid.uuid4().hex
            claims = _input_claims(engine, checkpointer, input, options)
        request = ThreadRequest(
            thread_id=options.thread_id,
            run_id=options.run_id,
            checkpoint_id=options.checkpoint_id,
            input=input,
            wait=options.wait,
            direct=direct_store_calls(checkpointer, options),
            cache=cache,
            claim_with_input=claims,
            rerun_tool_calls=options.rerun_tool_calls,
        )
        claimed = await _claiming(engine, checkpointer, input, options, request) if claims else None
        if claimed is None:
            request.claim_with_input = False
            leased = await _opening(engine, checkpointer, input, options, request)
        else:
            leased = claimed
        try:
            await run_loop(engine, leased)
            return leased
        finally:
            assert leased.lease is not None
            await release(leased.lease, direct=request.direct)
    finally:
        if bound is not None:
            _unbind(bound)


def _input_claims(
    engine: Engine, checkpointer: BaseCheckpointer, input: Any, options: RunOptions
) -> bool:
    """Whether the run's input write may take the thread's lease with it.

    Only a fresh input (no resume, Command, fork, or caller's run id that a
    retried delivery could reuse) on a store that makes it one write, and
    only when no code of the graph runs before that write (no branch from
    START): the state is read before the lease is held, which the write's
    compare-and-set on the head makes safe.
    """
    return (
        input is not None
        and not isinstance(input, Command)
        and options.checkpoint_id is None
        and START not in engine.plan.branches
        and checkpointer.writes_leases_with_steps("_put_and_acquire")
    )


async def _opening(
    engine: Engine,
    checkpointer: BaseCheckpointer,
    input: Any,
    options: RunOptions,
    request: ThreadRequest,
) -> Run:
    """`prepare_run` on a thread opened the usual way: its lease taken first."""
    opened = await open_thread(checkpointer, engine.state, engine.plan.nodes, request)
    assert opened is not None  # only a claim taken with the input comes back empty
    try:
        run = await prepare_run(engine, checkpointer, opened.input, options, opened)
    except BaseException:
        await release(opened.lease, direct=request.direct)
        raise
    run.lease = opened.lease
    return run


async def _claiming(
    engine: Engine,
    checkpointer: BaseCheckpointer,
    input: Any,
    options: RunOptions,
    request: ThreadRequest,
) -> Run | None:
    """`prepare_run` whose input write takes the lease: one store write, not two.

    None when the thread turned out busy, or its head moved between this
    run's read and its write (nothing was stored), or the input turned out
    to be in the thread already: the run then claims the thread first, as
    any other does.
    """
    opened = await open_thread(checkpointer, engine.state, engine.plan.nodes, request)
    if opened is None:
        return None
    if opened.redelivered:  # nothing to write, so no write to take the lease with
        drop_claim(opened.lease, stored=False)
        return None
    try:
        run = await prepare_run(engine, checkpointer, opened.input, options, opened)
    except (LeaseHeld, ConcurrentRunError):
        drop_claim(opened.lease, stored=False)
        return None
    except BaseException:
        drop_claim(opened.lease, stored=True)
        raise
    if opened.saver.claim is not None:  # no write took it: should not be
        drop_claim(opened.lease, stored=False)
        return None
    run.lease = opened.lease
    return run


def _bind(store: Any, options: RunOptions) -> tuple[Token[Any] | None, Token[Any]]:
    """Make this run's store and config the ones its nodes and tools see."""
    bound_store = bind_store(store) if store is not None else None
    return bound_store, current_run.set(options.info)


def _unbind(tokens: tuple[Token[Any] | None, Token[Any]]) -> None:
    store, run = tokens
    current_run.reset(run)
    if store is not None:
        current_store.reset(store)
