"""Run routes: create (background), wait, stream, join, join_stream, get, list, cancel, delete.

Stateful runs live under `/threads/{thread_id}/runs`; stateless ones
(`/runs/...`, the SDK's `thread_id=None`) run on a temporary thread that is
deleted when they end unless `on_completion="keep"`. `wait` answers the
final state (with `__interrupt__` when the run paused, `{"__error__": ...}`
when it failed), sending whitespace every few seconds meanwhile so proxies
keep the connection; `stream` answers SSE whose first event is `metadata`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from flowgraph.graph._thread.inputs import input_step_of
from flowgraph.server._http.context import ServerContext, new_id, server_of
from flowgraph.server._http.fields import Fields, query_bool, query_int, read_body
from flowgraph.server._records.registry import FINISHED, RunRecord, ThreadRecord
from flowgraph.server._runs.queue import UNSUPPORTED
from flowgraph.server._wire.convert import (
    command_from_wire,
    input_from_wire,
    run_json,
    snapshot_to_wire,
    to_wire,
)
from flowgraph.server._wire.responses import ApiError, dumps, json_response
from flowgraph.server._wire.stream import STREAM_MODES, encode_sse

__all__ = ["ROUTES"]

HEARTBEAT_S = 5.0
_STRATEGIES = ("reject", "interrupt", "rollback", "enqueue")
_SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


# -- creating ----------------------------------------------------------------------


def _stream_modes(body: Fields) -> list[str]:
    modes = body.texts("stream_mode") or ["values"]
    unknown = [m for m in modes if m not in STREAM_MODES]
    if unknown:
        raise ApiError(
            422,
            f"Field 'stream_mode' has unsupported mode(s) {', '.join(map(repr, unknown))}; "
            f"this server streams {', '.join(sorted(STREAM_MODES))}",
        )
    return list(dict.fromkeys(modes))


def _breakpoints(body: Fields, key: str, nodes: set[str]) -> str | list[str] | None:
    if body.raw(key) == "*":
        return "*"
    names = body.texts(key)
    for name in names or ():
        if name not in nodes:
            raise ApiError(
                422,
                f"Field '{key}' names {name!r}, which is not a node; "
                f"nodes: {', '.join(sorted(nodes))}",
            )
    return names


async def _new_run(server: ServerContext, request: Request, thread_id: str | None) -> RunRecord:
    """The run a create/wait/stream request asks for, stored and started or queued."""
    data = await read_body(request, limit=server.max_body)
    body = Fields(data)
    entry = server.graphs.get(body.required_str("assistant_id"))
    raw_input = body.raw("input")
    if raw_input is not None and not isinstance(raw_input, dict) and not entry.any_input:
        body.fail("input", "an object")
    nodes = set(entry.app.engine.plan.nodes)
    command = body.obj("command")
    if command is not None:  # a bad update, goto or message: 422 now
        command_from_wire(command, entry.message_fields, nodes)
    input_from_wire(raw_input, entry.message_fields, "input")
    modes = _stream_modes(body)
    interrupt_before = _breakpoints(body, "interrupt_before", nodes)
    interrupt_after = _breakpoints(body, "interrupt_after", nodes)
    checkpoint_id = body.text("checkpoint_id")
    if checkpoint_id is None and body.has("checkpoint"):
        checkpoint_id = body.nested("checkpoint").text("checkpoint_id")
    metadata = body.obj("metadata") or {}
    config = body.obj("config") or {}
    configurable = Fields(config, "config").obj("configurable") or {}
    Fields(config, "config").integer("recursion_limit", 100, minimum=1)
    strategy = body.choice("multitask_strategy", _STRATEGIES, "enqueue") or "enqueue"
    stateless = thread_id is None
    if_not_exists = body.choice(
        "if_not_exists", ("create", "reject"), "create" if stateless else "reject"
    )
    on_completion = body.choice("on_completion", ("delete", "keep"), "delete")
    on_disconnect = body.choice("on_disconnect", ("cancel", "continue"), "continue")
    body.choice("durability", ("sync", "async", "exit"))
    resumable = body.flag("stream_resumable", False)
    subgraphs = body.flag("stream_subgraphs", False)
    after_seconds = body.integer("after_seconds", 0)
    body.obj("context")

    if server.runs.queue is not None:
        _check_queueable(body, strategy)
    thread_id = thread_id or new_id()
    thread_meta = {"graph_id": entry.graph_id, "assistant_id": entry.assistant_id}
    existing = await server.find_thread(thread_id)
    if existing is None and if_not_exists == "reject":
        raise ApiError(404, f"Thread with ID {thread_id} not found")
    await server.reg(server.registry.ensure_thread, thread_id, thread_meta)
    # the checkpoint before an input is derived from the input step's (see _thread.inputs)
    stored_id = checkpoint_id and (input_step_of(checkpoint_id) or checkpoint_id)
    if (
        stored_id is not None
        and await server.reg(server.checkpointer.get, thread_id, stored_id) is None
    ):
        raise ApiError(404, f"Thread {thread_id} has no checkpoint {checkpoint_id}")
    run_id = new_id()
    now = time.time()
    record = RunRecord(
        run_id=run_id,
        thread_id=thread_id,
        assistant_id=entry.assistant_id,
        graph_id=entry.graph_id,
        created_at=now,
        updated_at=now,
        metadata={**metadata, **thread_meta},
        multitask_strategy=strategy,
        temporary=stateless,
        kwargs={
            "input": raw_input,
            "command": command,
            "config": {
                **config,
                "configurable": {
                    **configurable,
                    "run_id": run_id,
                    "thread_id": thread_id,
                    **thread_meta,
                },
            },
            "context": data.get("context") or {},
            "stream_mode": modes,
            "interrupt_before": interrupt_before,
            "interrupt_after": interrupt_after,
            "checkpoint_id": checkpoint_id,
            "webhook": body.text("webhook"),
            "feedback_keys": None,
            "temporary": stateless,
            "subgraphs": subgraphs,
            "resumable": resumable,
            "on_completion": on_completion,
            "on_disconnect": on_disconnect,
            "after_seconds": after_seconds,
        },
    )
    return await server.runs.submit(record)


def _check_queueable(body: Fields, strategy: str) -> None:
    """422 for what a Celery worker's task cannot do (`--queue`)."""
    for key in (*UNSUPPORTED, "checkpoint"):
        if body.has(key):
            raise ApiError(
                422,
                f"Field '{key}' is not supported for runs handed to Celery "
                "(--queue): the workers' task takes an input or a resume value",
            )
    for key in ("update", "goto"):
        if body.nested("command").has(key):
            raise ApiError(
                422,
                f"Field 'command.{key}' is not supported for runs handed to Celery "
                "(--queue); update the thread's state first",
            )
    if strategy in ("interrupt", "rollback"):
        raise ApiError(
            422,
            f"Field 'multitask_strategy': {strategy!r} is not supported for "
            "runs handed to Celery (--queue): a worker's run cannot be stopped",
        )


def _locations(record: RunRecord, tail: str) -> dict[str, str]:
    base = f"/threads/{record.thread_id}/runs/{record.run_id}"
    return {"Location": f"{base}{tail}", "Content-Location": base}


async def create_run(request: Request) -> Response:
    server = server_of(request)
    thread_id = request.path_params.get("thread_id")
    record = await _new_run(server, request, thread_id)
    return json_response(
        run_json(record), headers={"Content-Location": _locations(record, "")["Content-Location"]}
    )


async def stream_run(request: Request) -> Response:
    server = server_of(request)
    record = await _new_run(server, request, request.path_params.get("thread_id"))
    cancel = record.kwargs.get("on_disconnect") == "cancel"
    return StreamingResponse(
        _follow(server, record.run_id, after=0, modes=None, cancel_on_disconnect=cancel),
        media_type="text/event-stream",
        headers={**_SSE_HEADERS, **_locations(record, "/stream")},
    )


async def wait_run(request: Request) -> Response:
    server = server_of(request)
    record = await _new_run(server, request, request.path_params.get("thread_id"))
    cancel = record.kwargs.get("on_disconnect") == "cancel"
    return StreamingResponse(
        _waiting(server, record, cancel_on_disconnect=cancel),
        media_type="application/json",
        headers=_locations(record, "/join"),
    )


# -- results and streams -------------------------------------------------------------


async def _result(server: ServerContext, run_id: str, thread: ThreadRecord | None) -> bytes:
    """What `wait` and `join` answer once the run is over."""
    local = server.runs.local.get(run_id)
    if local is not None:
        await local.done.wait()
        return local.final
    record = await server.runs.wait_finished(run_id)
    if record is not None and record.status == "error" and record.error:
        return dumps({"__error__": record.error})
    thread_id = record.thread_id if record is not None else (thread.thread_id if thread else None)
    if thread_id is None:
        return b"{}"
    current = await server.find_thread(thread_id)
    if current is None:
        return b"{}"
    snapshot = await server.snapshot(current)
    if snapshot is None or snapshot.checkpoint_id is None:
        return b"{}"
    return dumps(snapshot_to_wire(snapshot))


async def _waiting(
    server: ServerContext, record: RunRecord, *, cancel_on_disconnect: bool
) -> AsyncIterator[bytes]:
    result = asyncio.ensure_future(_result(server, record.run_id, None))
    try:
        while True:
            try:
                body = await asyncio.wait_for(asyncio.shield(result), timeout=HEARTBEAT_S)
            except TimeoutError:
                yield b"\n"  # leading whitespace: ignored by JSON parsers, keeps proxies patient
                continue
            yield body
            return
    finally:
        if not result.done():
            result.cancel()
            if cancel_on_disconnect:  # a task: this one is being cancelled
                server.runs.spawn(server.runs.request_stop(record.run_id, "interrupt"))


def _mode_filter(modes: list[str] | None) -> set[str] | None:
    if not modes:
        return None
    allowed = set()
    for mode in modes:
        if mode == "messages-tuple":
            allowed.add("messages")
        elif mode == "messages":
            allowed.update({"messages/metadata", "messages/partial", "messages/complete"})
        else:
            allowed.add(mode)
    return allowed | {"metadata", "error"}


async def _follow(
    server: ServerContext,
    run_id: str,
    *,
    after: int,
    modes: list[str] | None,
    cancel_on_disconnect: bool,
) -> AsyncIterator[bytes]:
    """A run's SSE events from event `after` on: live here, or followed through the store."""
    allowed = _mode_filter(modes)
    finished = False
    try:
        while True:
            local = server.runs.local.get(run_id)
            if local is not None:
                async for event_id, event, data in local.follow(after, heartbeat=HEARTBEAT_S):
                    if event_id is None:
                        yield b": heartbeat\r\n\r\n"
                    elif allowed is None or event.split("|", 1)[0] in allowed:
                        yield encode_sse(event, data, event_id)
                finished = True
                return
            record = await server.runs.get_run(run_id)
            if record is None or record.status in FINISHED:
                finished = True
                return
            if record.status == "running":
                async for chunk in _follow_elsewhere(server, record, after, allowed):
                    yield chunk
                finished = True
                return
            await asyncio.sleep(0.05)
    finally:
        if not finished and cancel_on_disconnect:  # a task: this one is being cancelled
            server.runs.spawn(server.runs.request_stop(run_id, "interrupt"))


async def _follow_elsewhere(
    server: ServerContext, record: RunRecord, after: int, allowed: set[str] | None
) -> AsyncIterator[bytes]:
    """Follow a run another server process executes: its new states as `values` events.

    Tokens and node updates stay in the process that runs it; what every
    process can read is the checkpoints, so each new head is sent.
    """
    sequence = 0

    def event(name: str, data: Any) -> bytes:
        nonlocal sequence
        sequence += 1
        return encode_sse(name, dumps(data), f"x{sequence}")

    if after == 0:
        yield event("metadata", {"run_id": record.run_id, "attempt": 1})
    head = await server.reg(server.checkpointer.head, record.thread_id)
    last_beat = time.monotonic()
    while True:
        await asyncio.sleep(server.runs.poll / 2)
        current = await server.runs.get_run(record.run_id)
        new_head = await server.reg(server.checkpointer.head, record.thread_id)
        if new_head != head and new_head is not None and (allowed is None or "values" in allowed):
            head = new_head
            thread = await server.find_thread(record.thread_id)
            snapshot = await server.snapshot(thread) if thread is not None else None
            if snapshot is not None:
                yield event("values", to_wire(snapshot.values))
                last_beat = time.monotonic()
        if current is None or current.status in FINISHED:
            if current is not None and current.status == "error" and current.error:
                yield event("error", current.error)
            return
        if time.monotonic() - last_beat > HEARTBEAT_S:
            last_beat = time.monotonic()
            yield b": heartbeat\r\n\r\n"


# -- reading, joining, cancelling ------------------------------------------------------


async def _run_of(server: ServerContext, request: Request) -> RunRecord:
    thread_id = request.path_params["thread_id"]
    run_id = request.path_params["run_id"]
    record = await server.runs.get_run(run_id)
    if record is None or record.thread_id != thread_id:
        raise ApiError(404, f"Run {run_id} of thread {thread_id} not found")
    return record


async def get_run(request: Request) -> Response:
    server = server_of(request)
    return json_response(run_json(await _run_of(server, request)))


async def list_runs(request: Request) -> Response:
    server = server_of(request)
    thread_id = request.path_params["thread_id"]
    await server.thread(thread_id)
    limit = query_int(request, "limit", 10)
    offset = query_int(request, "offset", 0)
    status = request.query_params.get("status")
    runs = await server.reg(server.registry.runs_of, thread_id)
    out = []
    for run in runs:
        if server.registry.is_lost(run):
            run = await server.runs.get_run(run.run_id) or run
        if status is None or run.status == status:
            out.append(run_json(run))
    return json_response(out[offset : offset + limit])


async def join_run(request: Request) -> Response:
    server = server_of(request)
    record = await _run_of(server, request)
    return StreamingResponse(
        _waiting(server, record, cancel_on_disconnect=query_bool(request, "cancel_on_disconnect")),
        media_type="application/json",
        headers=_locations(record, "/join"),
    )


async def join_stream(request: Request) -> Response:
    server = server_of(request)
    record = await _run_of(server, request)
    last = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
    after = int(last) + 1 if last is not None and last.isdigit() else 0
    modes = request.query_params.getlist("stream_mode") or None
    if modes is not None:
        modes = [m for part in modes for m in part.split(",") if m]
        unknown = [m for m in modes if m not in STREAM_MODES]
        if unknown:
            raise ApiError(422, f"Query parameter 'stream_mode' has unsupported mode(s) {unknown}")
    local = server.runs.local.get(record.run_id)
    if local is None and record.status in FINISHED:
        stream: AsyncIterator[bytes] = _nothing()
    else:
        stream = _follow(
            server,
            record.run_id,
            after=after,
            modes=modes,
            cancel_on_disconnect=query_bool(request, "cancel_on_disconnect"),
        )
    return StreamingResponse(
        stream,
        media_type="text/event-stream",
        headers={**_SSE_HEADERS, **_locations(record, "/stream")},
    )


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield b""  # pragma: no cover - makes this an async generator


async def cancel_run(request: Request) -> Response:
    server = server_of(request)
    record = await _run_of(server, request)
    wait = query_bool(request, "wait")
    action = request.query_params.get("action", "interrupt")
    if action not in ("interrupt", "rollback"):
        raise ApiError(
            422, f"Query parameter 'action' is {action!r}; expected interrupt or rollback"
        )
    queue = server.runs.queue
    if queue is not None and record.status == "running":
        raise ApiError(
            409,
            f"Run {record.run_id} is running in a Celery worker (--queue), "
            "which cannot stop it; wait for it to end",
        )
    if record.status == "pending":
        if queue is not None:
            await server.reg(queue.app.control.revoke, record.run_id)
        if action == "rollback":
            await server.reg(server.registry.delete_run, record.run_id)
        else:
            await server.reg(server.registry.update_run, record.run_id, status="interrupted")
    elif record.status == "running":
        await server.runs.request_stop(record.run_id, action)
    if not wait:
        return Response(status_code=202)
    return StreamingResponse(
        _waiting(server, record, cancel_on_disconnect=False),
        media_type="application/json",
        headers=_locations(record, "/join"),
    )


async def cancel_many(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    action = request.query_params.get("action", "interrupt")
    if action not in ("interrupt", "rollback"):
        raise ApiError(
            422, f"Query parameter 'action' is {action!r}; expected interrupt or rollback"
        )
    thread_id = body.text("thread_id")
    run_ids = body.texts("run_ids")
    status = body.choice("status", ("pending", "running", "all"))
    candidates: list[RunRecord] = []
    if thread_id is not None:
        candidates = await server.reg(server.registry.runs_of, thread_id)
    elif run_ids:
        for run_id in run_ids:
            found = await server.runs.get_run(run_id)
            if found is not None:
                candidates.append(found)
    elif status is not None:
        for wanted in ("pending", "running") if status == "all" else (status,):
            candidates += await server.reg(server.registry.runs_with, wanted)
    for run in candidates:
        if run_ids and run.run_id not in run_ids:
            continue
        if run.status == "pending":
            await server.reg(server.registry.update_run, run.run_id, status="interrupted")
        elif run.status == "running":
            await server.runs.request_stop(run.run_id, action)
    return Response(status_code=204)


async def delete_run(request: Request) -> Response:
    server = server_of(request)
    record = await _run_of(server, request)
    if record.status in ("pending", "running"):
        raise ApiError(409, f"Run {record.run_id} is {record.status}; cancel it before deleting it")
    await server.reg(server.registry.delete_run, record.run_id)
    return Response(status_code=204)


async def stateless_run_of_thread(request: Request) -> Response:
    """`GET /runs/{run_id}`: a run found by id alone (stateless runs' Content-Location)."""
    server = server_of(request)
    record = await server.runs.get_run(request.path_params["run_id"])
    if record is None:
        raise ApiError(404, f"Run {request.path_params['run_id']} not found")
    return json_response(run_json(record))


ROUTES = [
    Route("/runs", create_run, methods=["POST"]),
    Route("/runs/stream", stream_run, methods=["POST"]),
    Route("/runs/wait", wait_run, methods=["POST"]),
    Route("/runs/cancel", cancel_many, methods=["POST"]),
    Route("/runs/{run_id}", stateless_run_of_thread, methods=["GET"]),
    Route("/threads/{thread_id}/runs", create_run, methods=["POST"]),
    Route("/threads/{thread_id}/runs", list_runs, methods=["GET"]),
    Route("/threads/{thread_id}/runs/stream", stream_run, methods=["POST"]),
    Route("/threads/{thread_id}/runs/wait", wait_run, methods=["POST"]),
    Route("/threads/{thread_id}/runs/{run_id}", get_run, methods=["GET"]),
    Route("/threads/{thread_id}/runs/{run_id}", delete_run, methods=["DELETE"]),
    Route("/threads/{thread_id}/runs/{run_id}/join", join_run, methods=["GET"]),
    Route("/threads/{thread_id}/runs/{run_id}/stream", join_stream, methods=["GET"]),
    Route("/threads/{thread_id}/runs/{run_id}/cancel", cancel_run, methods=["POST"]),
]
