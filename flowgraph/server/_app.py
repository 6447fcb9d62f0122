"""`create_app`: the graphs, their store and the API routes as one Starlette app."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.graph import CompiledGraph, StateGraph
from flowgraph.server import _assistants, _runs, _threads, _ui
from flowgraph.server._auth import TokenAuth
from flowgraph.server._context import ServerContext
from flowgraph.server._executor import RunManager
from flowgraph.server._graphs import GraphEntry, Graphs, assistant_uuid
from flowgraph.server._http import DEFAULT_MAX_BODY, ApiError, json_response
from flowgraph.server._queue import CeleryQueue
from flowgraph.server._registry import open_registry

__all__ = ["create_app"]

log = logging.getLogger("flowgraph.server")


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("flowgraph")
    except Exception:  # running from a source tree that was never installed
        return "0.0.0"


def _store_of(
    graphs: Mapping[str, CompiledGraph], given: BaseCheckpointer | None
) -> BaseCheckpointer:
    if given is not None:
        return given
    stores = {id(app.checkpointer): app.checkpointer for app in graphs.values()}
    if len(stores) == 1:
        (only,) = stores.values()
        if only is not None:
            return only
    return MemoryCheckpointer()


async def _ok(request: Request) -> Response:
    return json_response({"ok": True})


async def _info(request: Request) -> Response:
    return json_response(
        {
            "version": _version(),
            "flowgraph": True,
            "flags": {"assistants": True, "crons": False, "langsmith": False},
        }
    )


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    detail = (
        exc.detail if exc.status_code != 404 else f"No route {request.method} {request.url.path}"
    )
    return json_response({"detail": detail}, status=exc.status_code, headers=exc.headers)


async def _server_error(request: Request, exc: Exception) -> Response:
    log.exception("%s %s failed", request.method, request.url.path, exc_info=exc)
    return json_response({"detail": f"Internal error: {type(exc).__name__}: {exc}"}, status=500)


def create_app(
    graphs: Mapping[str, CompiledGraph | StateGraph],
    *,
    checkpointer: BaseCheckpointer | None = None,
    auth_token: str | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    poll: float = 0.5,
    queue: str | Any | None = None,
    cors_origins: Sequence[str] = (),
) -> Starlette:
    """An ASGI app serving `graphs` ({graph id: app}) with the LangGraph Server API.

    Every graph runs against `checkpointer` (default: the one the apps
    share, else an in-memory store); the server keeps thread metadata and
    run records in the same store. With `auth_token` every API call needs
    it (`x-api-key` or `Authorization: Bearer`). `max_body` bounds request
    bodies (bytes); `poll` is how often (seconds) the server looks for
    queued runs, stops asked by other processes and lost runs. `queue` (a
    Celery broker URL, or a Celery app) hands runs to Celery workers running
    `flowgraph.integrations.celery.make_thread_task` instead of running them
    in this process. `cors_origins` lets web pages of those origins ("*":
    any) call the API from a browser.
    """
    if not graphs:
        raise ValueError("create_app() needs at least one graph: {'agent': app}")
    compiled = {
        graph_id: app.compile() if isinstance(app, StateGraph) else app
        for graph_id, app in graphs.items()
    }
    for graph_id, app in compiled.items():
        if not isinstance(app, CompiledGraph):
            raise TypeError(f"Graph {graph_id!r} is a {type(app).__name__}, not a compiled graph")
    store = _store_of(compiled, checkpointer)
    entries = [
        GraphEntry(
            graph_id,
            app if app.checkpointer is store else app.with_checkpointer(store),
            assistant_uuid(graph_id),
        )
        for graph_id, app in compiled.items()
    ]
    registry = open_registry(store)
    celery = CeleryQueue(queue, [e.graph_id for e in entries]) if queue is not None else None
    manager = RunManager(Graphs(entries), registry, poll=poll, queue=celery)
    context = ServerContext(Graphs(entries), store, registry, manager, max_body)
    manager.graphs = context.graphs

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await manager.start()
        try:
            yield
        finally:
            await manager.close()
            registry.close()

    routes: list[Any] = [
        Route("/ok", _ok, methods=["GET"]),
        Route("/info", _info, methods=["GET"]),
        *_assistants.ROUTES,
        *_threads.ROUTES,
        *_runs.ROUTES,
        *_ui.ROUTES,
    ]
    asgi = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _server_error,
        },
    )
    asgi.state.flowgraph = context
    if auth_token:
        asgi.add_middleware(TokenAuth, token=auth_token)
    if cors_origins:  # outermost: a browser's preflight needs no token
        asgi.add_middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=["Content-Location", "Location"],
        )
    return asgi
