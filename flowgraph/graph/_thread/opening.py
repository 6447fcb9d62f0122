"""Opening a thread for a run: the lease, the checkpoint, and how the input meets them.

The engine's one call into this room before a run is set up. The lease is
taken before anything is read (the protocol's order, see `lease`), and given
back at once if the checkpoint cannot be read (an unknown `checkpoint_id`), so
a run that fails here leaves the thread free. Or, for a fresh input on a store
that can, the lease is only registered here and the input's write takes it
(`claim_with_input`). Then what only the thread can tell: whether the run forks,
whether its input is one the thread took already (a redelivery), which branch it
extends, and which tool results other branches stored for it. The `Saver` the
run writes with comes back ready.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from flowgraph.graph._core.pool import call_store
from flowgraph.graph._core.types import Command
from flowgraph.graph._thread.inputs import before_input, input_step_of
from flowgraph.graph._thread.lease import RunLease, claim, drop_claim, enter_claim, release
from flowgraph.graph._thread.record import Cursor, Loaded
from flowgraph.graph._thread.replay import loaded_checkpoint
from flowgraph.graph._thread.reuse import Reuse, stored_answers
from flowgraph.graph._thread.saver import Saver
from flowgraph.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import BaseCheckpointer
    from flowgraph.graph._core.schema import StateAdapter
    from flowgraph.graph._core.spec import NodeSpec
    from flowgraph.graph._thread.replay import ThreadCache

__all__ = ["Opened", "ThreadRequest", "open_thread"]

_MESSAGE_TYPES = frozenset({HumanMessage, AIMessage, SystemMessage, ToolMessage})
"""The message classes an input may carry with an id of its own (see `_redelivered`)."""


@dataclass(slots=True, kw_only=True)
class ThreadRequest:
    """What a run asks of its thread: which one, from where, as whom, with what input."""

    thread_id: str
    run_id: str
    """A head this run id wrote already means the same run delivered again."""
    checkpoint_id: str | None
    """Where the run starts (None: the head); maybe the derived checkpoint before an
    input (see `inputs`), which starts a branch at the input step's parent."""
    input: Any
    wait: bool | float
    direct: bool
    cache: ThreadCache | None
    claim_with_input: bool = False
    """Register the lease for the input's write to take (`put_and_acquire`) instead of
    taking it first; the caller falls back to a plain open if that write finds it busy."""
    rerun_tool_calls: bool = False


@dataclass(slots=True)
class Opened:
    """A thread ready for a run: its lease, its checkpoint, and the run's writer."""

    lease: RunLease
    loaded: Loaded | None
    """The checkpoint the run goes on from; None for a new thread."""
    saver: Saver
    scope: str
    """The id scope of the run's first step (see `step_scope`)."""
    forking: bool
    """The run starts at a checkpoint that is not the thread's head."""
    redelivered: bool
    """The input is in the thread already: the run resumes instead of applying it."""
    reuse: Reuse | None
    input: Any
    """The run's input: the request's, or the input a run from the checkpoint before an
    input applies again."""


async def open_thread(
    checkpointer: BaseCheckpointer,
    state: StateAdapter,
    nodes: dict[str, NodeSpec],
    request: ThreadRequest,
) -> Opened | None:
    """The thread opened for `request`; None only with `claim_with_input`, when a run
    of this process holds the thread (the caller then opens it the usual way)."""
    thread_id, direct, cache = request.thread_id, request.direct, request.cache
    if request.claim_with_input:
        lease = enter_claim(checkpointer, thread_id, request.run_id)
        if lease is None:
            return None
    else:
        lease = await claim(
            checkpointer, thread_id, request.run_id, wait=request.wait, direct=direct
        )
    try:
        checkpoint_id = request.checkpoint_id
        if checkpoint_id is not None and input_step_of(checkpoint_id) is not None:
            # the checkpoint before an input: a branch from the input step's parent
            found = await before_input(checkpointer, state, thread_id, checkpoint_id, direct=direct)
            request.input = found.input_for(request.input)
            if found.parent_id is None:  # before the thread's first input: the empty state
                head = await call_store(direct, checkpointer.head, thread_id)
                return await _opened(checkpointer, state, nodes, request, lease, None, head)
            checkpoint_id = found.parent_id
        loaded = await loaded_checkpoint(
            state, checkpointer, thread_id, checkpoint_id, direct=direct, cache=cache
        )
        return await _opened(checkpointer, state, nodes, request, lease, loaded)
    except BaseException:
        if request.claim_with_input:
            drop_claim(lease, stored=False)
        else:
            await release(lease, direct=direct)
        raise


async def _opened(
    checkpointer: BaseCheckpointer,
    state: StateAdapter,
    nodes: dict[str, NodeSpec],
    request: ThreadRequest,
    lease: RunLease,
    loaded: Loaded | None,
    head: str | None = None,
) -> Opened:
    """`head`: the thread's head, for a branch from the empty state (no `loaded`)."""
    input = request.input
    # a new thread: the first write must find no head (another run may be creating it);
    # a branch from the empty state: the head it saw
    cursor = Cursor(request.thread_id, expected=head) if loaded is None else loaded.cursor
    forking = head is not None or (
        loaded is not None and loaded.record.checkpoint_id != cursor.expected
    )
    redelivered = False
    if loaded is not None and not forking:
        if loaded.metadata.get("run_id") == request.run_id:
            # The same run delivered again (a task queue's retry): its input is already in
            # the thread, so it goes on from where it got to; the compare-and-set on this
            # head keeps a delivery still running elsewhere from interleaving with this one.
            redelivered = True
        elif input is not None and not isinstance(input, Command):
            # The input is in the thread already (see _redelivered): it was taken before,
            # by this caller or a racing one, so its turn is not run a second time.
            redelivered = _redelivered(state, loaded.values, input)
    branch = forking or (loaded is not None and bool(loaded.metadata.get("branch")))
    saver = Saver(
        checkpointer,
        state,
        cursor,
        run_id=request.run_id,
        direct=request.direct,
        cache=request.cache,
        fork=forking,
        branch=branch,
        claim=lease if request.claim_with_input else None,
    )
    reuse = None
    answering = redelivered or input is None or isinstance(input, Command)
    if branch and answering and loaded is not None and not request.rerun_tool_calls:
        reuse = await call_store(
            request.direct,
            stored_answers,
            checkpointer,
            state,
            nodes,
            request.thread_id,
            loaded.record.checkpoint_id,
            loaded.values,
            frozenset(loaded.cursor.keys.values()),
        )
    scope = saver.step_scope()
    return Opened(lease, loaded, saver, scope, forking, redelivered, reuse, input)


def _redelivered(state: StateAdapter, values: dict[str, Any], input: Any) -> bool:
    """Whether a new input is one the thread took already: a redelivery, not a new turn.

    So it is when the input carries messages, each with its own id, each of them
    already in the thread with that id and the same content, and nothing else. Two
    workers that read the same head and send the same next message (same id) then
    make one turn, whichever writes first: the other's input finds its message in
    the thread and resumes instead (a no-op when the turn finished). An edit (same
    id, new content) and an input without ids apply as usual.
    """
    if type(input) is dict:  # the usual input: no copy, no ABC check
        writes = input
    elif isinstance(input, BaseModel):
        writes = {k: getattr(input, k) for k in input.model_fields_set}
    elif isinstance(input, Mapping):
        writes = dict(input)
    else:
        return False
    fields = state.message_fields
    if not writes or not fields.issuperset(writes):
        return False
    for key, given in writes.items():
        items = given if isinstance(given, (list, tuple)) else [given]
        if not items or None in map(_own_id, items):
            return False  # the usual new input: answered before the thread's messages are read
        stored = {m.id: m for m in values.get(key) or ()}
        if any(stored.get(item.id) != item for item in items):
            return False
    return True


def _own_id(item: Any) -> str | None:
    """The id a message the caller built carries (None for tuples, dicts, strings), by
    exact type: every new input on a continued thread asks, so no isinstance through
    pydantic's metaclass."""
    return getattr(item, "id", None) if type(item) in _MESSAGE_TYPES else None
