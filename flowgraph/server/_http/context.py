"""What every route reaches: the served graphs, the registry, the runs, and the thread views.

A thread is known when the registry has its record or the checkpoints
have it (a thread made by `flowgraph run` or a script on the same store).
Its state is read with the graph named in its metadata (`graph_id`), or
with the only graph when the server serves one.
"""

from __future__ import annotations

import asyncio
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.graph import StateSnapshot
from flowgraph.server._records.registry import Registry, ThreadRecord
from flowgraph.server._runs.executor import RunManager
from flowgraph.server._runs.graphs import GraphEntry, Graphs
from flowgraph.server._wire.convert import interrupt_to_wire, iso, task_id, to_wire
from flowgraph.server._wire.responses import ApiError

if TYPE_CHECKING:
    from flowgraph.store import BaseStore

__all__ = ["ServerContext", "new_id", "server_of"]

_T = TypeVar("_T")


def new_id() -> str:
    """A time-ordered UUID (version 7 layout): ids of later runs and threads sort later."""
    millis = time.time_ns() // 1_000_000
    value = (millis & ((1 << 48) - 1)) << 80 | secrets.randbits(80)
    value = (value & ~(0xF << 76)) | (0x7 << 76)
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    return str(uuid.UUID(int=value))


@dataclass(slots=True)
class ServerContext:
    graphs: Graphs
    checkpointer: BaseCheckpointer
    registry: Registry
    runs: RunManager
    max_body: int
    store: BaseStore
    """The long-term store the /store routes serve (the one apps compiled with a store use)."""

    async def reg(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        return await asyncio.to_thread(fn, *args, **kwargs)

    # -- threads ---------------------------------------------------------------------

    async def find_thread(self, thread_id: str) -> ThreadRecord | None:
        """The thread's record; one is made for a thread only the checkpoints know."""
        record: ThreadRecord | None = await self.reg(self.registry.get_thread, thread_id)
        if record is not None:
            return record
        if await self.reg(self.checkpointer.head, thread_id) is None:
            return None
        return await self.reg(self.registry.ensure_thread, thread_id, {})

    async def thread(self, thread_id: str) -> ThreadRecord:
        record = await self.find_thread(thread_id)
        if record is None:
            raise ApiError(404, f"Thread with ID {thread_id} not found")
        return record

    def graph_of(self, record: ThreadRecord) -> GraphEntry | None:
        graph_id = record.metadata.get("graph_id")
        if isinstance(graph_id, str):
            entry = self.graphs.find(graph_id)
            if entry is not None:
                return entry
        return self.graphs.only()

    async def snapshot(
        self, record: ThreadRecord, checkpoint_id: str | None = None
    ) -> StateSnapshot | None:
        entry = self.graph_of(record)
        if entry is None:
            return None
        try:
            return await asyncio.to_thread(entry.app.get_state, record.thread_id, checkpoint_id)
        except Exception as exc:  # an unknown checkpoint id, or one of another graph
            if checkpoint_id is not None:
                raise ApiError(
                    404, f"Thread {record.thread_id} has no checkpoint {checkpoint_id}: {exc}"
                ) from None
            raise

    async def status(self, record: ThreadRecord, snapshot: StateSnapshot | None) -> str:
        """busy while a run holds the thread; else how the last run left it."""
        if snapshot is not None and snapshot.active_run is not None:
            return "busy"
        if self.runs.queue is not None:  # runs in Celery workers hold no claim here
            runs = await self.reg(self.registry.runs_of, record.thread_id)
            if any(r.status in ("pending", "running") for r in runs):
                return "busy"
        if record.status in ("error", "interrupted"):
            return record.status
        if snapshot is not None and snapshot.interrupts:
            return "interrupted"
        return "idle"

    async def thread_json(self, record: ThreadRecord, *, values: bool = True) -> dict[str, Any]:
        snapshot = await self.snapshot(record)
        interrupts: dict[str, list[dict[str, Any]]] = {}
        wire_values: Any = None
        if snapshot is not None and snapshot.checkpoint_id is not None:
            if values:
                wire_values = to_wire(snapshot.values)
            for index, node in enumerate(snapshot.next):
                waiting = [
                    interrupt_to_wire(i)
                    for i in snapshot.interrupts
                    if i.node.split("/", 1)[0] == node
                ]
                if waiting:
                    interrupts[task_id(snapshot.checkpoint_id, node, index)] = waiting
        updated = (
            max(record.updated_at, snapshot.created_at or 0.0) if snapshot else record.updated_at
        )
        return {
            "thread_id": record.thread_id,
            "created_at": iso(record.created_at),
            "updated_at": iso(updated),
            "state_updated_at": iso(
                snapshot.created_at if snapshot and snapshot.created_at else record.created_at
            ),
            "metadata": record.metadata,
            "status": await self.status(record, snapshot),
            "config": {},
            "values": wire_values,
            "error": record.error,
            "interrupts": interrupts,
        }

    async def forget_thread(self, thread_id: str, holder: str) -> None:
        """Delete a thread's record, runs and checkpoints (through every app, so their caches
        forget it too); the caller holds the thread's lease as `holder`."""
        await self.reg(self.registry.delete_thread, thread_id)
        for entry in self.graphs.entries:
            await asyncio.to_thread(entry.app.delete_thread, thread_id, run_id=holder)


def server_of(request: Request) -> ServerContext:
    context: ServerContext = request.app.state.flowgraph
    return context
