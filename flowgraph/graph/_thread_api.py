"""The thread API of a compiled graph: read, edit, hold and tidy a thread's checkpoints.

`CompiledGraph` inherits it; it works on the app's checkpointer, its
state adapter and its thread cache, and never runs a node (an update goes
through the reducers as a node's write would, as one new checkpoint).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, overload

from flowgraph._context import RunUsage, message_id_factory
from flowgraph._ids import deterministic_id_factory
from flowgraph.errors import ConcurrentRunError, InvalidUpdateError
from flowgraph.graph._config import thread_of
from flowgraph.graph._core.merge import apply_writes
from flowgraph.graph._core.spec import Task, TaskResult
from flowgraph.graph._core.types import START, StateSnapshot
from flowgraph.graph._engine.bridge import run_sync
from flowgraph.graph._engine.loop import start_tasks
from flowgraph.graph._engine.run import Engine, Run
from flowgraph.graph._thread.inputs import (
    before_input,
    before_input_id,
    before_input_snapshot,
    input_step_of,
    is_input_step,
    shown_parent,
)
from flowgraph.graph._thread.lease import active_run, claim, holds, release, withdraw_reserved
from flowgraph.graph._thread.record import (
    Cursor,
    record_payload,
    referenced_messages,
    snapshot_of,
)
from flowgraph.graph._thread.replay import loaded_checkpoint
from flowgraph.graph._thread.saver import Saver

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import BaseCheckpointer
    from flowgraph.graph._thread.record import Loaded
    from flowgraph.graph._thread.replay import ThreadCache

__all__ = ["UPDATE", "ThreadAPI", "hold_thread", "thread_and_checkpoint"]

UPDATE = "__update__"
"""The node name update_state() writes as when no as_node is given."""


def thread_and_checkpoint(
    thread: str | Mapping[str, Any], checkpoint_id: str | None
) -> tuple[str, str | None]:
    """A thread id and checkpoint id, from the arguments or from a LangGraph config dict."""
    if isinstance(thread, str):
        return thread, checkpoint_id
    named, configured = thread_of(thread)
    if checkpoint_id is not None and configured is not None and checkpoint_id != configured:
        raise ValueError(
            f"checkpoint_id is given twice, as {checkpoint_id!r} and as {configured!r} in the "
            "config; pass it once"
        )
    return named, checkpoint_id or configured


@contextlib.contextmanager
def hold_thread(
    checkpointer: BaseCheckpointer,
    thread_id: str,
    *,
    doing: str,
    run_id: str | None = None,
    wait: bool | float = False,
) -> Iterator[None]:
    """Hold the thread's lease while an operation rewrites the thread (`doing`: "delete it").

    So no run starts (in any process) while it is half rewritten, and one
    that is running is not rewritten under it: a busy thread is a
    ConcurrentRunError saying so (after `wait` seconds, if given). A caller
    that already holds the thread (`claim_thread(run_id=...)`) passes that
    `run_id` and keeps its hold.
    """
    if run_id is not None and holds(checkpointer, thread_id, run_id):
        yield
        return
    try:
        lease = run_sync(
            claim(checkpointer, thread_id, run_id or uuid.uuid4().hex, wait=wait, direct=True)
        )
    except ConcurrentRunError as busy:
        who = f"run '{busy.run_id}'" if busy.run_id else "another run"
        raise ConcurrentRunError(
            f"Thread '{thread_id}' is busy: {who} is working on it, so it cannot {doing} "
            "now; try again once the run has ended (or stop the run first).",
            thread_id=thread_id,
            run_id=busy.run_id,
        ) from None
    try:
        yield
    finally:
        run_sync(release(lease, direct=True))


class ThreadAPI:
    """get_state, get_state_history, update_state, thread claims, threads, delete, prune."""

    engine: Engine
    checkpointer: BaseCheckpointer | None
    _cache: ThreadCache | None

    # -- the state API -------------------------------------------------------------

    def _store(self) -> BaseCheckpointer:
        if self.checkpointer is None:
            raise InvalidUpdateError(
                "This graph keeps no history; compile(checkpointer=...) to read or change "
                "a thread's state"
            )
        return self.checkpointer

    def _snapshot(self, loaded: Loaded | None, thread_id: str) -> StateSnapshot:
        state = self.engine.state
        if loaded is None:
            return StateSnapshot(
                values=state.view(state.defaults()),
                next=(),
                checkpoint_id=None,
                parent_id=None,
                step=-1,
                created_at=None,
                metadata={},
                thread_id=thread_id,
            )
        nodes = self.engine.plan.nodes
        subgraphs = frozenset(name for name, spec in nodes.items() if spec.kind == "subgraph")
        return snapshot_of(loaded, state, subgraphs)

    def get_state(
        self,
        thread_id: str | Mapping[str, Any],
        checkpoint_id: str | None = None,
        *,
        subgraphs: bool = False,
    ) -> StateSnapshot:
        """The thread's state at its head (or at `checkpoint_id`), and what runs next.

        An unknown thread gives an empty snapshot (`checkpoint_id` None).
        LangGraph's config dict (`{"configurable": {"thread_id": ..., "checkpoint_id":
        ...}}`, e.g. a snapshot's `config`) names the thread and checkpoint too.
        `subgraphs` is taken for LangGraph's code and changes nothing: a subgraph keeps
        no checkpoints of its own, so a subgraph task's `state` stays its config.
        """
        thread_id, checkpoint_id = thread_and_checkpoint(thread_id, checkpoint_id)
        store = self._store()
        if checkpoint_id is not None and input_step_of(checkpoint_id) is not None:
            return self._before_input(store, thread_id, checkpoint_id)
        loaded = run_sync(
            loaded_checkpoint(self.engine.state, store, thread_id, checkpoint_id, direct=True)
        )
        snapshot = shown_parent(self._snapshot(loaded, thread_id))
        if checkpoint_id is None:
            busy = active_run(store, thread_id)
            if busy is not None:
                snapshot = replace(snapshot, active_run=busy)
        return snapshot

    def get_state_history(
        self,
        thread_id: str | Mapping[str, Any],
        *,
        limit: int | None = None,
        before: str | Mapping[str, Any] | None = None,
        before_inputs: bool = True,
    ) -> Iterator[StateSnapshot]:
        """Every checkpoint of the thread, newest first (all branches).

        `thread_id` (and `before`) may be LangGraph's config dicts. As in
        LangGraph, each input has a checkpoint before it (`next == ("__start__",)`),
        derived from the input's step (see `_thread.inputs`); `before_inputs=False`
        leaves those out: only the stored steps.
        """
        thread_id, _ = thread_and_checkpoint(thread_id, None)
        if before is not None and not isinstance(before, str):
            before = thread_of(before)[1]
        store = self._store()
        left = limit
        if before is not None and (step_id := input_step_of(before)) is not None:
            before = step_id  # what is older than the derived checkpoint: older than its step
        elif before is not None and limit != 0 and before_inputs:
            record = store.get(thread_id, before)
            if record is not None and is_input_step(record_payload(record)["metadata"]):
                # the derived checkpoint before `before` is older than it
                left = None if limit is None else limit - 1
                yield self.get_state(thread_id, before_input_id(before))
        for record in store.history(thread_id, limit=limit, before=before):
            if left is not None:
                if left <= 0:
                    return
                left -= 1
            snapshot = self.get_state(thread_id, record.checkpoint_id)
            if not before_inputs and snapshot.parent_id != record.parent_id:
                snapshot = replace(snapshot, parent_id=record.parent_id)  # the stored parent
            yield snapshot
            if before_inputs and is_input_step(snapshot.metadata) and (left is None or left > 0):
                if left is not None:
                    left -= 1
                yield self.get_state(thread_id, before_input_id(record.checkpoint_id))

    def _before_input(
        self, store: BaseCheckpointer, thread_id: str, checkpoint_id: str
    ) -> StateSnapshot:
        """The derived checkpoint before an input step (see `_thread.inputs`)."""
        found = run_sync(
            before_input(store, self.engine.state, thread_id, checkpoint_id, direct=True)
        )
        parent = self._snapshot(None, thread_id)
        if found.parent_id is not None:
            parent = self.get_state(thread_id, found.parent_id)
        return before_input_snapshot(found, parent)

    @overload
    def update_state(
        self,
        thread_id: str,
        values: Mapping[str, Any] | None,
        *,
        as_node: str | None = None,
        checkpoint_id: str | None = None,
    ) -> str: ...

    @overload
    def update_state(
        self,
        thread_id: Mapping[str, Any],
        values: Mapping[str, Any] | None,
        *,
        as_node: str | None = None,
        checkpoint_id: str | None = None,
    ) -> dict[str, Any]: ...

    def update_state(
        self,
        thread_id: str | Mapping[str, Any],
        values: Mapping[str, Any] | None,
        *,
        as_node: str | None = None,
        checkpoint_id: str | None = None,
    ) -> str | dict[str, Any]:
        """Write `values` to the thread through the reducers, as a new checkpoint; its id.

        With `as_node`, the write counts as that node's output: the next
        tasks are the ones its edges lead to, and a step the thread was
        paused in is superseded (its interrupts are no longer waiting).
        Without, the thread's pending tasks stay as they were, and so does a
        pause: its interrupts keep their ids, `Command(resume=...)` answers
        them, and the paused node runs again on the edited state; siblings
        that had finished are not run again, their writes are merged when
        the step completes (after this update).

        With `checkpoint_id` (time travel), the update applies to that past
        checkpoint instead of the head: the new checkpoint is its child, a
        new branch, and becomes the thread's head, so `invoke(None,
        thread_id=...)` continues from the edited past. Given LangGraph's
        config dict (a snapshot's `config`) instead of a thread id, it reads
        the thread and checkpoint from it and returns the new checkpoint's
        config, as LangGraph does.
        """
        as_config = not isinstance(thread_id, str)
        thread, checkpoint_id = thread_and_checkpoint(thread_id, checkpoint_id)
        if checkpoint_id is not None and input_step_of(checkpoint_id) is not None:
            raise InvalidUpdateError(
                f"Checkpoint {checkpoint_id!r} is the state before an input, which flowgraph "
                "derives and does not store: to change that input, invoke the new input at it; "
                "to edit the state, update the checkpoint before it or the one after it"
            )
        new_id = run_sync(self._update_state(thread, dict(values or {}), as_node, checkpoint_id))
        if as_config:
            return {
                "configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": new_id}
            }
        return new_id

    async def _update_state(
        self,
        thread_id: str,
        values: dict[str, Any],
        as_node: str | None,
        checkpoint_id: str | None = None,
    ) -> str:
        store = self._store()
        lease = await claim(store, thread_id, uuid.uuid4().hex, direct=True)
        try:
            return await self._write_update(store, thread_id, values, as_node, checkpoint_id)
        finally:
            await release(lease, direct=True)

    async def _write_update(
        self,
        store: BaseCheckpointer,
        thread_id: str,
        values: dict[str, Any],
        as_node: str | None,
        checkpoint_id: str | None = None,
    ) -> str:
        engine = self.engine
        if as_node is not None and as_node not in engine.plan.nodes and as_node != START:
            raise InvalidUpdateError(
                f"update_state(as_node={as_node!r}): no such node; "
                f"known nodes: {', '.join(sorted(engine.plan.nodes))}",
                node=as_node,
            )
        loaded = await loaded_checkpoint(
            engine.state, store, thread_id, checkpoint_id, direct=True, cache=self._cache
        )
        cursor = loaded.cursor if loaded else Cursor(thread_id, expected=None)
        # an edit of a past checkpoint starts a branch (see graph._thread.reuse)
        branch = loaded is not None and (
            loaded.record.checkpoint_id != cursor.expected or bool(loaded.metadata.get("branch"))
        )
        saver = Saver(
            store,
            engine.state,
            cursor,
            run_id=uuid.uuid4().hex,
            direct=True,
            cache=self._cache,
            branch=branch,
        )
        run = Run(
            values=loaded.values if loaded else engine.state.defaults(),
            tasks=list(loaded.tasks) if loaded else [],
            scope=saver.step_scope(),
            usage=RunUsage(),
            step=loaded.record.step if loaded else -1,
            join_seen=loaded.joins if loaded else {},
            saver=saver,
        )
        node = as_node or UPDATE
        step = run.step + 1
        token = message_id_factory.set(deterministic_id_factory(run.scope, step, 0))
        try:
            writes = engine.state.check_update(node, values)
        finally:
            message_id_factory.reset(token)
        result = TaskResult(Task(node), list(writes.items()))
        run.values = apply_writes(engine.state, run.values, [result], scope=run.scope, step=step)
        if as_node is not None:
            await start_tasks(engine, run, as_node)
        record = await saver.save_step(
            run.values, [result], run.tasks, run.join_seen, run.usage, step, source="update"
        )
        if as_node is None and loaded is not None and loaded.pending:
            # an edit of a paused step: the step, its pauses and finished tasks carry over
            await saver.save_pending(loaded.pending)
        return record.checkpoint_id

    # -- holding a thread ahead of a run ---------------------------------------------

    def claim_thread(self, thread_id: str, *, run_id: str, wait: bool | float = False) -> None:
        """Take the thread's lease for a run that starts later in this process.

        For a server that must refuse a busy thread before it answers: the run
        started afterwards with the same `run_id` adopts the lease (and gives
        it back when it ends). ConcurrentRunError if the thread is busy.
        """
        run_sync(self.aclaim_thread(thread_id, run_id=run_id, wait=wait))

    async def aclaim_thread(
        self, thread_id: str, *, run_id: str, wait: bool | float = False
    ) -> None:
        """`claim_thread` from async code."""
        store = self._store()
        direct = getattr(store, "is_nonblocking", False)
        await claim(store, thread_id, run_id, wait=wait, direct=direct, reserve=True)

    def release_thread(self, thread_id: str, *, run_id: str) -> None:
        """Give back a lease `claim_thread` took, if no run adopted it (else nothing happens).

        A run with `run_id` that starts while the lease is being given back finds the
        thread busy (or waits, with `wait`): it never adopts a lease on its way back.
        """
        run_sync(self.arelease_thread(thread_id, run_id=run_id))

    async def arelease_thread(self, thread_id: str, *, run_id: str) -> None:
        """`release_thread` from async code."""
        store = self._store()
        lease = withdraw_reserved(store, thread_id, run_id)
        if lease is not None:
            await release(lease, direct=getattr(store, "is_nonblocking", False))

    def threads(self) -> list[str]:
        """Every thread the checkpointer holds."""
        return self._store().threads()

    def delete_thread(
        self, thread_id: str, *, run_id: str | None = None, wait: bool | float = False
    ) -> None:
        """Forget a thread and everything stored for it.

        It holds the thread's lease meanwhile: a thread a run is writing is a
        ConcurrentRunError (`wait` seconds, or True, waits for the run to end
        instead). A caller holding the thread already (`claim_thread`) passes
        its `run_id`.
        """
        store = self._store()
        with hold_thread(store, thread_id, doing="be deleted", run_id=run_id, wait=wait):
            store.delete_thread(thread_id)
            if self._cache is not None:
                self._cache.forget(thread_id)

    def prune(
        self,
        thread_id: str,
        *,
        keep_last: int,
        run_id: str | None = None,
        wait: bool | float = False,
    ) -> int:
        """Keep the newest `keep_last` checkpoints of the head's branch; returns how many went.

        Messages no kept checkpoint shows (old versions, other branches) are
        deleted too. Like `delete_thread`, it holds the thread's lease (a
        thread a run is writing is a ConcurrentRunError, unless `wait`).
        """
        store = self._store()
        with hold_thread(store, thread_id, doing="be pruned", run_id=run_id, wait=wait):
            dropped = store.prune(thread_id, keep_last)
            kept = referenced_messages(store, self.engine.state, thread_id)
            store.forget_messages(thread_id, kept)
            if self._cache is not None:
                self._cache.forget(thread_id)
        return dropped
