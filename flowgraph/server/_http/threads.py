"""Thread routes: create, get, search, update, delete, copy, state, history.

Shapes and status codes follow LangGraph Server (threads.create with an
existing id is 409 unless `if_exists="do_nothing"`; update merges
metadata; search filters by metadata, values (JSON containment) and
status). Beyond it: `GET /threads/{id}/graph?format=svg|mermaid` draws the
thread's graph with the path it took, for the inspector.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from flowgraph.errors import ConcurrentRunError
from flowgraph.server._http.context import ServerContext, new_id, server_of
from flowgraph.server._http.fields import Fields, query_bool, query_int, read_body
from flowgraph.server._records.registry import ThreadRecord
from flowgraph.server._runs.queue import QUEUE_OWNER
from flowgraph.server._runs.rollback import copy_thread
from flowgraph.server._wire.convert import checkpoint_ref, input_from_wire, state_to_wire
from flowgraph.server._wire.responses import ApiError, json_response

__all__ = ["DELETE_WAIT_S", "ROUTES", "contains"]

DELETE_WAIT_S = 30.0
"""How long deleting a thread waits for its running run to stop."""


def contains(container: Any, wanted: Any) -> bool:
    """JSON containment, as PostgreSQL's `@>` (LangGraph's metadata and values filters)."""
    if isinstance(wanted, dict):
        return isinstance(container, dict) and all(
            k in container and contains(container[k], v) for k, v in wanted.items()
        )
    if isinstance(wanted, list):
        return isinstance(container, list) and all(
            any(contains(item, w) for item in container) for w in wanted
        )
    return bool(container == wanted)


async def create_thread(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    thread_id = body.text("thread_id") or new_id()
    metadata = body.obj("metadata") or {}
    if_exists = body.choice("if_exists", ("raise", "do_nothing"), "raise")
    now = time.time()
    record = ThreadRecord(thread_id=thread_id, created_at=now, updated_at=now, metadata=metadata)
    exists = await server.find_thread(thread_id)
    if exists is None and await server.reg(server.registry.create_thread, record):
        for index, superstep in enumerate(body.raw("supersteps") or []):
            await _apply_superstep(server, record, superstep, index)
        return json_response(await server.thread_json(record))
    if if_exists == "do_nothing":
        existing = await server.thread(thread_id)
        return json_response(await server.thread_json(existing))
    raise ApiError(409, f"Thread with ID {thread_id} already exists")


async def _apply_superstep(
    server: ServerContext, record: ThreadRecord, superstep: Any, index: int
) -> None:
    entry = server.graph_of(record)
    if entry is None or not isinstance(superstep, dict):
        raise ApiError(422, f"Field 'supersteps[{index}]' needs metadata.graph_id naming a graph")
    for update in superstep.get("updates") or []:
        values = input_from_wire(
            update.get("values") or {}, entry.message_fields, f"supersteps[{index}].values"
        )
        await asyncio.to_thread(
            entry.app.update_state, record.thread_id, values, as_node=update.get("as_node")
        )


async def get_thread(request: Request) -> Response:
    server = server_of(request)
    record = await server.thread(request.path_params["thread_id"])
    return json_response(await server.thread_json(record))


async def update_thread(request: Request) -> Response:
    server = server_of(request)
    thread_id = request.path_params["thread_id"]
    body = Fields(await read_body(request, limit=server.max_body))
    await server.thread(thread_id)
    record = await server.reg(
        server.registry.update_thread, thread_id, metadata=body.obj("metadata") or {}
    )
    if record is None:
        raise ApiError(404, f"Thread with ID {thread_id} not found")
    return json_response(await server.thread_json(record))


async def delete_thread(request: Request) -> Response:
    """Stop the thread's running run, then delete the thread holding its lease.

    Held, no queued run starts while the thread and its runs are deleted (in
    any process). A run the server cannot stop (one a script or a worker
    started on the same store), or one that does not stop in DELETE_WAIT_S,
    is a 409.
    """
    server = server_of(request)
    thread_id = request.path_params["thread_id"]
    record = await server.thread(thread_id)
    app = (server.graph_of(record) or server.graphs.entries[0]).app
    running = await server.runs.holder(thread_id, server.graphs.entries[0])
    if running is not None:
        run = await server.runs.get_run(running)
        if run is None or run.owner == QUEUE_OWNER:  # a script's or a Celery worker's run
            raise ApiError(
                409,
                f"Thread {thread_id} is busy: run {running}, which this server did not start "
                "and cannot stop, is working on it; delete the thread when it has ended",
            )
        await server.runs.request_stop(running, "interrupt")
    holder = f"delete-{new_id()}"
    try:
        await app.aclaim_thread(thread_id, run_id=holder, wait=DELETE_WAIT_S)
    except ConcurrentRunError as busy:
        raise ApiError(
            409,
            f"Thread {thread_id} is busy: run {busy.run_id or '(unknown)'} did not stop within "
            f"{DELETE_WAIT_S:g} s of being asked to; delete the thread when it has ended",
        ) from None
    try:
        await server.forget_thread(thread_id, holder)
    finally:
        await app.arelease_thread(thread_id, run_id=holder)
    return Response(status_code=204)


async def _search(server: ServerContext, body: Fields) -> tuple[list[dict[str, Any]], int]:
    """One page of threads (limit/offset applied) and how many match in all.

    Threads only the checkpoints know (made outside the server) have no
    metadata and list after the server's own. States are read only for the
    page, unless a values or status filter needs every candidate's.
    """
    metadata = body.obj("metadata")
    values = body.obj("values")
    status = body.choice("status", ("idle", "busy", "interrupted", "error"))
    ids = body.texts("ids")
    limit = body.integer("limit", 10)
    offset = body.integer("offset", 0)
    sort_by = body.choice(
        "sort_by",
        ("thread_id", "status", "created_at", "updated_at", "state_updated_at"),
        "created_at",
    )
    order = body.choice("sort_order", ("asc", "desc"), "desc")
    records = {r.thread_id: r for r in await server.reg(server.registry.threads)}
    if not metadata:
        for thread_id in await server.reg(server.checkpointer.threads):
            if thread_id not in records:
                records[thread_id] = ThreadRecord(
                    thread_id=thread_id, created_at=0.0, updated_at=0.0
                )
    candidates = [
        r
        for r in records.values()
        if (ids is None or r.thread_id in ids) and (not metadata or contains(r.metadata, metadata))
    ]
    reverse = order == "desc"
    if values or status or sort_by in ("status", "state_updated_at"):
        threads = [await server.thread_json(r) for r in candidates]
        threads = [
            t
            for t in threads
            if (not values or contains(t["values"], values))
            and (not status or t["status"] == status)
        ]
        threads.sort(key=lambda t: str(t.get(sort_by or "created_at") or ""), reverse=reverse)
        return threads[offset : offset + limit], len(threads)
    key = sort_by or "created_at"
    candidates.sort(key=lambda r: getattr(r, key), reverse=reverse)
    page = candidates[offset : offset + limit]
    return [await server.thread_json(r) for r in page], len(candidates)


async def search_threads(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    page, _ = await _search(server, body)
    return json_response(body.selected(page))


async def count_threads(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    counted = Fields({**body.data, "limit": 1_000_000_000, "offset": 0})
    return json_response((await _search(server, counted))[1])


async def copy(request: Request) -> Response:
    server = server_of(request)
    source = await server.thread(request.path_params["thread_id"])
    now = time.time()
    target = ThreadRecord(
        thread_id=new_id(),
        created_at=now,
        updated_at=now,
        metadata=dict(source.metadata),
        status=source.status,
    )
    entry = server.graph_of(source)
    if entry is not None:
        try:
            await asyncio.to_thread(copy_thread, entry.app, source.thread_id, target.thread_id)
        except ConcurrentRunError as exc:
            raise ApiError(409, str(exc)) from None
    await server.reg(server.registry.create_thread, target)
    return json_response(await server.thread_json(target))


def _checkpoint_arg(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        inner = value.get("checkpoint_id")
        if inner is None or isinstance(inner, str):
            return inner
    raise ApiError(422, f"Field '{where}' must be a checkpoint id or an object with checkpoint_id")


async def _state(server: ServerContext, thread_id: str, checkpoint_id: str | None) -> Response:
    record = await server.thread(thread_id)
    snapshot = await server.snapshot(record, checkpoint_id)
    if snapshot is None:
        return json_response(_empty_state(thread_id))
    return json_response(state_to_wire(thread_id, snapshot))


def _empty_state(thread_id: str) -> dict[str, Any]:
    return {
        "values": {},
        "next": [],
        "tasks": [],
        "metadata": None,
        "created_at": None,
        "checkpoint": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": None},
        "parent_checkpoint": None,
        "interrupts": [],
        "checkpoint_id": None,
        "parent_checkpoint_id": None,
    }


async def get_state(request: Request) -> Response:
    query_bool(request, "subgraphs")  # accepted: a subgraph's state is part of its parent's
    checkpoint_id = request.query_params.get("checkpoint_id") or None
    return await _state(server_of(request), request.path_params["thread_id"], checkpoint_id)


async def get_state_at(request: Request) -> Response:
    query_bool(request, "subgraphs")
    return await _state(
        server_of(request), request.path_params["thread_id"], request.path_params["checkpoint_id"]
    )


async def post_state_at(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    checkpoint_id = _checkpoint_arg(body.raw("checkpoint"), "checkpoint")
    return await _state(server, request.path_params["thread_id"], checkpoint_id)


async def update_state(request: Request) -> Response:
    server = server_of(request)
    thread_id = request.path_params["thread_id"]
    body = Fields(await read_body(request, limit=server.max_body))
    record = await server.thread(thread_id)
    entry = server.graph_of(record)
    if entry is None:
        raise ApiError(
            422,
            f"Thread {thread_id} has no graph yet: run it once, or create it "
            "with metadata.graph_id",
        )
    as_node = body.text("as_node")
    if (
        as_node is not None
        and as_node not in entry.app.engine.plan.nodes
        and as_node != "__start__"
    ):
        raise ApiError(
            422, f"Field 'as_node' names {as_node!r}, which is not a node of graph {entry.graph_id}"
        )
    # an earlier checkpoint: the update is its child, a new branch (time travel)
    at = _checkpoint_arg(body.raw("checkpoint_id") or body.raw("checkpoint"), "checkpoint_id")
    if at is not None and await server.reg(server.checkpointer.get, thread_id, at) is None:
        raise ApiError(404, f"Thread {thread_id} has no checkpoint {at}")
    raw = body.raw("values")
    if raw is not None and not isinstance(raw, dict):
        body.fail("values", "an object")
    values = input_from_wire(raw or {}, entry.message_fields, "values")
    try:
        checkpoint_id = await asyncio.to_thread(
            entry.app.update_state, thread_id, values, as_node=as_node, checkpoint_id=at
        )
    except ConcurrentRunError:
        raise ApiError(
            409, f"Thread {thread_id} is busy with a run; update it when the run ends"
        ) from None
    snapshot = await server.snapshot(record)
    status = "interrupted" if snapshot is not None and snapshot.interrupts else "idle"
    await server.reg(server.registry.update_thread, thread_id, status=status, error=None)
    checkpoint = checkpoint_ref(thread_id, checkpoint_id)
    return json_response(
        {"checkpoint": checkpoint, "configurable": checkpoint, "checkpoint_id": checkpoint_id}
    )


async def _history(
    server: ServerContext,
    thread_id: str,
    limit: int,
    before: str | None,
    metadata: dict[str, Any] | None,
) -> Response:
    record = await server.thread(thread_id)
    entry = server.graph_of(record)
    if entry is None:
        return json_response([])

    def read() -> list[dict[str, Any]]:
        states = []
        for snapshot in entry.app.get_state_history(thread_id, before=before):
            if metadata and not contains(snapshot.metadata, metadata):
                continue
            states.append(state_to_wire(thread_id, snapshot))
            if len(states) >= limit:
                break
        return states

    return json_response(await asyncio.to_thread(read))


async def post_history(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    before = _checkpoint_arg(body.raw("before"), "before")
    limit = body.integer("limit", 10, minimum=1)
    return await _history(
        server, request.path_params["thread_id"], limit, before, body.obj("metadata")
    )


async def get_history(request: Request) -> Response:
    server = server_of(request)
    limit = query_int(request, "limit", 10, minimum=1)
    before = request.query_params.get("before") or None
    return await _history(server, request.path_params["thread_id"], limit, before, None)


async def thread_graph(request: Request) -> Response:
    """The graph drawn with the path the thread took (format svg, mermaid or html)."""
    server = server_of(request)
    thread_id = request.path_params["thread_id"]
    record = await server.thread(thread_id)
    entry = server.graph_of(record)
    if entry is None:
        raise ApiError(404, f"Thread {thread_id} has no graph yet")
    fmt = request.query_params.get("format", "svg")
    from flowgraph import viz

    drawers = {
        "svg": (viz.to_svg, "image/svg+xml"),
        "mermaid": (viz.to_mermaid, "text/plain"),
        "html": (viz.to_html, "text/html"),
    }
    if fmt not in drawers:
        raise ApiError(422, f"Query parameter 'format' is {fmt!r}; expected svg, mermaid or html")
    draw, media = drawers[fmt]
    has_state = await server.reg(server.checkpointer.head, thread_id) is not None
    text: str = await asyncio.to_thread(
        draw,
        entry.app,
        thread_id=thread_id if has_state else None,
    )
    return Response(text, media_type=media)


ROUTES = [
    Route("/threads", create_thread, methods=["POST"]),
    Route("/threads/search", search_threads, methods=["POST"]),
    Route("/threads/count", count_threads, methods=["POST"]),
    Route("/threads/{thread_id}", get_thread, methods=["GET"]),
    Route("/threads/{thread_id}", update_thread, methods=["PATCH"]),
    Route("/threads/{thread_id}", delete_thread, methods=["DELETE"]),
    Route("/threads/{thread_id}/copy", copy, methods=["POST"]),
    Route("/threads/{thread_id}/state", get_state, methods=["GET"]),
    Route("/threads/{thread_id}/state", update_state, methods=["POST"]),
    Route("/threads/{thread_id}/state/checkpoint", post_state_at, methods=["POST"]),
    Route("/threads/{thread_id}/state/{checkpoint_id}", get_state_at, methods=["GET"]),
    Route("/threads/{thread_id}/history", post_history, methods=["POST"]),
    Route("/threads/{thread_id}/history", get_history, methods=["GET"]),
    Route("/threads/{thread_id}/graph", thread_graph, methods=["GET"]),
]
