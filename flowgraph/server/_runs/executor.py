"""Running runs: one at a time per thread, queued in the store, streamed to any listener.

A run is created `pending` in the registry; whichever server process
claims its thread starts it (`kick`), runs it as a background task of its
event loop, records every stream event in memory for listeners to replay
(`Last-Event-ID`), and at the end writes the run's status and the
thread's, releases the thread and starts the thread's next pending run.
A sweep every `poll` seconds renews this process's claims, applies stops
other processes asked for, starts pending runs whose thread became free
(also ones a dead process left), and marks runs whose process died as
lost. Clients disconnecting never stop a run (unless on_disconnect=cancel).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar, get_args

from flowgraph.errors import ConcurrentRunError
from flowgraph.graph import CompiledGraph, StreamMode, StreamPart
from flowgraph.server._records.registry import FINISHED, Registry, RunRecord
from flowgraph.server._runs.graphs import GraphEntry, Graphs
from flowgraph.server._runs.queue import QUEUE_OWNER, CeleryQueue
from flowgraph.server._runs.rollback import roll_back
from flowgraph.server._wire.convert import (
    command_from_wire,
    input_from_wire,
    run_json,
    snapshot_to_wire,
    to_wire,
)
from flowgraph.server._wire.responses import ApiError, dumps
from flowgraph.server._wire.stream import Translator, engine_modes

__all__ = ["LocalRun", "RunManager", "lost_error"]

log = logging.getLogger("flowgraph.server")
_T = TypeVar("_T")
_ENGINE_MODES = frozenset(get_args(StreamMode))
_CONFIG_KEYS = frozenset({"configurable", "recursion_limit", "tags", "metadata", "run_name"})
"""The keys of a run's config the engine reads (it refuses others; the wire may carry any)."""
RETAIN_S = 300.0
"""How long a finished run's events stay in memory for join_stream replays."""


def lost_error() -> dict[str, str]:
    return {
        "error": "RunLost",
        "message": "The server process running this run stopped before it finished. Every "
        "step it completed is checkpointed: start a run with no input to resume the thread.",
    }


class LocalRun:
    """A run this process executes: its events so far, its stop switch, its result."""

    def __init__(self, record: RunRecord) -> None:
        self.record = record
        self.events: list[tuple[str, bytes]] = []
        self.done = asyncio.Event()
        self.stop = threading.Event()
        self.stop_action: str | None = None
        self.final: bytes = b"{}"
        self.finished_at: float | None = None
        self._wakeup = asyncio.Event()

    def push(self, event: str, data: Any) -> None:
        self.events.append((event, dumps(data)))
        self.wake()

    def wake(self) -> None:
        wakeup, self._wakeup = self._wakeup, asyncio.Event()
        wakeup.set()

    def request_stop(self, action: str) -> None:
        if self.stop_action != "rollback":
            self.stop_action = action
        self.stop.set()

    async def follow(
        self, after: int, *, heartbeat: float
    ) -> AsyncIterator[tuple[str | None, str, bytes]]:
        """(id, event, data) from event number `after` on, live until the run ends.

        While nothing happens for `heartbeat` seconds, a (None, "", b"") keep-alive.
        """
        index = after
        while True:
            while index < len(self.events):
                event, data = self.events[index]
                yield str(index), event, data
                index += 1
            if self.done.is_set():
                return
            wakeup = self._wakeup
            try:
                await asyncio.wait_for(wakeup.wait(), timeout=heartbeat)
            except TimeoutError:
                yield None, "", b""


async def _call_webhook(url: str, run_id: str, registry: Registry, values: bytes) -> None:
    """POST the finished run (its record and final values) to the run's `webhook`, once."""
    import httpx

    record = await asyncio.to_thread(registry.get_run, run_id)
    if record is None:
        return
    body = {**run_json(record), "values": json.loads(values)}
    try:
        async with httpx.AsyncClient(timeout=10.0) as client:
            response = await client.post(url, content=dumps(body),
                                         headers={"content-type": "application/json"})  # fmt: skip
            response.raise_for_status()
    except httpx.HTTPError as exc:
        log.warning("webhook %s of run %s failed: %s", url, run_id, exc)


class RunManager:
    """The runs of one server process, over the registry every process shares."""

    def __init__(
        self,
        graphs: Graphs,
        registry: Registry,
        *,
        poll: float = 0.5,
        queue: CeleryQueue | None = None,
    ) -> None:
        self.graphs = graphs
        self.registry = registry
        self.poll = poll
        self.queue = queue
        """Set (`--queue`): runs go to Celery workers, and this process only tracks them."""
        self.local: dict[str, LocalRun] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._last_renew = 0.0

    async def reg(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """Call a blocking registry method off the event loop."""
        return await asyncio.to_thread(fn, *args, **kwargs)

    # -- lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        self._sweeper = asyncio.create_task(self._sweep_loop())

    async def close(self, grace: float = 5.0) -> None:
        """Stop the sweep; ask running runs to stop at their next step and wait a little."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        running = [r for r in self.local.values() if not r.done.is_set()]
        for run in running:
            run.request_stop("interrupt")
        if running:
            await asyncio.wait(
                [asyncio.ensure_future(r.done.wait()) for r in running], timeout=grace
            )

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- starting runs -------------------------------------------------------------

    async def submit(self, record: RunRecord) -> RunRecord:
        """Store a new run and start it if its thread is free (or queue it: multitask)."""
        if self.queue is not None:
            return await self._hand_over(record, self.queue)
        await self.reg(self.registry.put_run, record)
        strategy = record.multitask_strategy
        if strategy == "reject":
            entry = self.graphs.get(record.graph_id)
            if await self._claim(entry, record) is not None:
                await self.reg(self.registry.delete_run, record.run_id)
                raise ApiError(
                    409,
                    "Thread is already running a task. Wait for it to finish or choose a "
                    "different multitask strategy.",
                )
            return await self._launch(entry, record) or record
        if strategy in ("interrupt", "rollback"):
            holder = await self.holder(record.thread_id, self.graphs.get(record.graph_id))
            if holder is not None:
                await self.request_stop(holder, strategy)
        await self.kick(record.thread_id)
        return (await self.reg(self.registry.get_run, record.run_id)) or record

    async def _hand_over(self, record: RunRecord, queue: CeleryQueue) -> RunRecord:
        """Send the run to the Celery workers; this process only follows it."""
        if record.multitask_strategy == "reject":
            runs = await self.reg(self.registry.runs_of, record.thread_id)
            if any(r.status in ("pending", "running") for r in runs):
                raise ApiError(
                    409,
                    "Thread is already running a task. Wait for it to finish or choose a "
                    "different multitask strategy.",
                )
        entry = self.graphs.get(record.graph_id)
        input = self._input(entry, record)
        record.owner = QUEUE_OWNER
        await self.reg(self.registry.put_run, record)
        await asyncio.to_thread(queue.send, entry, record, input)
        return record

    async def _follow_queued(self, queue: CeleryQueue) -> None:
        """Bring the records of runs the workers execute up to date (see `queue`)."""
        for status in ("pending", "running"):
            for record in await self.reg(self.registry.runs_with, status, owner=QUEUE_OWNER):
                entry = self.graphs.find(record.graph_id)
                if entry is None:
                    continue
                state, failure = await asyncio.to_thread(queue.state, record.run_id)
                snapshot = await asyncio.to_thread(entry.app.get_state, record.thread_id)
                head_run = snapshot.metadata.get("run_id") if snapshot.checkpoint_id else None
                ours = head_run == record.run_id
                stopped = not snapshot.next or bool(snapshot.interrupts)
                thread_status = "interrupted" if snapshot.interrupts else "idle"
                if state == "FAILURE":
                    error = {"error": "WorkerError", "message": failure or "the task failed"}
                    await self.reg(self.registry.update_run, record.run_id, status="error",
                                   error=error)  # fmt: skip
                    await self.reg(self.registry.update_thread, record.thread_id,
                                   status="error", error=error)  # fmt: skip
                elif (
                    state == "SUCCESS"
                    or (ours and stopped)
                    or (status == "running" and head_run is not None and not ours)
                ):
                    await self.reg(self.registry.update_run, record.run_id, status="success")
                    await self.reg(self.registry.update_thread, record.thread_id,
                                   status=thread_status, error=None)  # fmt: skip
                elif status == "pending" and (ours or state in ("STARTED", "RETRY")):
                    await self.reg(self.registry.update_run, record.run_id, status="running")

    async def holder(self, thread_id: str, entry: GraphEntry) -> str | None:
        """The run holding the thread's lease (in any process; a dead holder holds nothing)."""
        snapshot = await asyncio.to_thread(entry.app.get_state, thread_id)
        return snapshot.active_run

    async def _claim(self, entry: GraphEntry, record: RunRecord) -> str | None:
        """Take the thread's lease for the run (it adopts it when it starts); the holder if busy."""
        try:
            await entry.app.aclaim_thread(record.thread_id, run_id=record.run_id)
        except ConcurrentRunError as busy:
            return busy.run_id or "another run"
        return None

    async def kick(self, thread_id: str) -> None:
        """Start the thread's next pending run, if no run of the thread is still on.

        A run counts as on from its lease until its record is finished, so the
        next one never starts while a rollback or the last bookkeeping of the
        previous one is under way (in whichever process).
        """
        if self.queue is not None:
            return  # the workers run them
        runs = await self.reg(self.registry.runs_of, thread_id)
        if any(r.status == "running" and not self.registry.is_lost(r) for r in runs):
            return
        now = time.time()
        pending = [
            r
            for r in runs
            if r.status == "pending"
            and self.graphs.find(r.graph_id)
            and r.created_at + float(r.kwargs.get("after_seconds") or 0) <= now
        ]
        if not pending:
            return
        pending.sort(
            key=lambda r: (r.multitask_strategy not in ("interrupt", "rollback"), r.created_at)
        )
        chosen = pending[0]
        entry = self.graphs.get(chosen.graph_id)
        if await self._claim(entry, chosen) is None:
            await self._launch(entry, chosen)

    async def _launch(self, entry: GraphEntry, record: RunRecord) -> RunRecord | None:
        """With the thread's lease taken for it: mark the run running here and start it."""
        store = entry.app.checkpointer
        assert store is not None
        head = await asyncio.to_thread(store.head, record.thread_id)
        started = await self.reg(self.registry.start_run, record.run_id, head)
        if started is None:  # another process started it, or it was cancelled meanwhile
            await entry.app.arelease_thread(record.thread_id, run_id=record.run_id)
            return None
        local = LocalRun(started)
        self.local[started.run_id] = local
        self.spawn(self._execute(entry, local))
        return started

    async def request_stop(self, run_id: str, action: str) -> None:
        """Ask a running run to stop at its next step (here, or via the registry elsewhere)."""
        local = self.local.get(run_id)
        if local is not None and not local.done.is_set():
            local.request_stop(action)
            return
        await self.reg(self.registry.update_run, run_id, cancel=action)

    # -- executing -----------------------------------------------------------------

    def _input(self, entry: GraphEntry, record: RunRecord) -> Any:
        """The engine input of a run: its command (resume, update, goto), else its input."""
        kwargs = record.kwargs
        fields = entry.message_fields
        command = kwargs.get("command")
        if command:
            routed = command_from_wire(command, fields, entry.app.engine.plan.nodes)
            if routed is not None:
                return routed
        raw = kwargs.get("input")
        return input_from_wire(raw, fields, "input") if raw is not None else None

    def _open(
        self, app: CompiledGraph, input: Any, record: RunRecord, stop: threading.Event
    ) -> AsyncIterator[StreamPart]:
        kwargs = record.kwargs
        config = kwargs.get("config") or {}
        modes = [
            m for m in engine_modes(kwargs.get("stream_mode") or ["values"]) if m in _ENGINE_MODES
        ]
        nodes = list(app.engine.plan.nodes)

        def breakpoints(key: str) -> list[str] | None:
            value = kwargs.get(key)
            return nodes if value == "*" else value

        call: dict[str, Any] = {
            "thread_id": record.thread_id,
            "checkpoint_id": kwargs.get("checkpoint_id"),
            "recursion_limit": int(config.get("recursion_limit") or 100),
            "interrupt_before": breakpoints("interrupt_before"),
            "interrupt_after": breakpoints("interrupt_after"),
            "run_id": record.run_id,
            "subgraphs": bool(kwargs.get("subgraphs")),
        }
        # the run's config and context reach the nodes that ask (config, runtime); keys of
        # the config the engine does not read are dropped, as unknown request fields are
        call["config"] = {k: v for k, v in config.items() if k in _CONFIG_KEYS}
        call["context"] = kwargs.get("context") or None
        return app.astream(input, mode=modes, stop=stop, **call)  # type: ignore[arg-type]

    async def _execute(self, entry: GraphEntry, local: LocalRun) -> None:
        record = local.record
        app = entry.app
        modes = frozenset(record.kwargs.get("stream_mode") or ["values"])
        translator = Translator(
            modes=modes,
            run_id=record.run_id,
            thread_id=record.thread_id,
            graph_id=entry.graph_id,
            assistant_id=entry.assistant_id,
            run_metadata=dict(record.metadata),
        )
        local.push("metadata", {"run_id": record.run_id, "attempt": 1})
        error: dict[str, Any] | None = None
        try:
            input = self._input(entry, record)
            for event, data in translator.start(to_wire(record.kwargs.get("input"))):
                local.push(event, data)
            async for part in self._open(app, input, record, local.stop):
                for event, data in translator.feed(part):
                    local.push(event, data)
            for event, data in translator.finish():
                local.push(event, data)
        except Exception as exc:  # the run failed: its error is the result, the server goes on
            error = {"error": type(exc).__name__, "message": str(exc)}
            log.info("run %s failed: %s: %s", record.run_id, type(exc).__name__, exc)
            local.push("error", error)
        await self._finish(entry, local, error)

    async def _finish(
        self, entry: GraphEntry, local: LocalRun, error: dict[str, Any] | None
    ) -> None:
        record = local.record
        thread_id = record.thread_id
        app = entry.app
        try:
            stopped = local.stop_action is not None and error is None
            if stopped and local.stop_action == "rollback":
                await self._roll_back(app, record)
                local.final = b"{}"
            else:
                snapshot = await asyncio.to_thread(app.get_state, thread_id)
                if error is not None:
                    status, thread_status = "error", "error"
                    local.final = dumps({"__error__": error})
                else:
                    local.final = dumps(snapshot_to_wire(snapshot))
                    status = "interrupted" if stopped else "success"
                    paused = bool(snapshot.interrupts or snapshot.next) and not stopped
                    thread_status = "interrupted" if paused else "idle"
                await self.reg(
                    self.registry.update_run, record.run_id, status=status, error=error, cancel=None
                )
                await self.reg(
                    self.registry.update_thread, thread_id, status=thread_status, error=error
                )
                webhook = record.kwargs.get("webhook")
                if webhook:
                    self.spawn(_call_webhook(webhook, record.run_id, self.registry, local.final))
            if record.temporary and record.kwargs.get("on_completion", "delete") == "delete":
                await asyncio.to_thread(app.delete_thread, thread_id)
                await self.reg(self.registry.delete_thread, thread_id)
        except Exception:
            log.exception("finishing run %s", record.run_id)
        finally:
            local.finished_at = time.time()
            local.done.set()
            local.wake()
            self.spawn(self.kick(thread_id))

    async def _roll_back(self, app: CompiledGraph, record: RunRecord) -> None:
        """Remove a stopped run's checkpoints (holding the thread meanwhile), then its record."""
        await asyncio.to_thread(roll_back, app, record.thread_id, record.head_before)
        await self.reg(self.registry.delete_run, record.run_id)

    # -- reading runs ----------------------------------------------------------------

    async def get_run(self, run_id: str) -> RunRecord | None:
        """A run's record; a run whose process died is marked lost first."""
        record = await self.reg(self.registry.get_run, run_id)
        if record is not None and self.registry.is_lost(record):
            record = await self._mark_lost(record)
        return record

    async def _mark_lost(self, record: RunRecord) -> RunRecord:
        updated = await self.reg(self.registry.mark_lost, record, lost_error())
        if updated is not None:
            log.warning("run %s was lost with its server process %s", record.run_id, record.owner)
            await self.reg(
                self.registry.update_thread, record.thread_id, status="error", error=lost_error()
            )
            return updated
        return (await self.reg(self.registry.get_run, record.run_id)) or record

    async def wait_finished(self, run_id: str) -> RunRecord | None:
        """Wait until the run is over (here or elsewhere); its record, None if it was deleted."""
        while True:
            local = self.local.get(run_id)
            if local is not None:
                await local.done.wait()
                return await self.reg(self.registry.get_run, run_id)
            record = await self.get_run(run_id)
            if record is None or record.status in FINISHED:
                return record
            await asyncio.sleep(min(self.poll, 0.2))

    # -- the sweep -------------------------------------------------------------------

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self.poll)
            try:
                await self.sweep()
            except Exception:
                log.exception("run sweep failed")

    async def sweep(self) -> None:
        now = time.time()
        if self.queue is not None:
            await self._follow_queued(self.queue)
        mine = [r for r in self.local.values() if not r.done.is_set()]
        if mine:
            asked = await self.reg(self.registry.stops_asked)
            for run_id, action in asked.items():
                local = self.local.get(run_id)
                if local is not None:
                    local.request_stop(action)
            if now - self._last_renew >= self.registry.lease_s / 5:
                self._last_renew = now
                await self.reg(self.registry.renew, [r.record.run_id for r in mine])
        for record in await self.reg(self.registry.runs_with, "running"):
            if self.registry.is_lost(record, now):
                await self._mark_lost(record)
        for thread_id in {r.thread_id for r in await self.reg(self.registry.runs_with, "pending")}:
            await self.kick(thread_id)
        for run_id, local in list(self.local.items()):
            if local.finished_at is not None and now - local.finished_at > RETAIN_S:
                del self.local[run_id]
