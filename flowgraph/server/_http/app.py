"""`create_app`: the graphs, their store and the API routes as one Starlette app."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.graph import CompiledGraph, StateGraph
from flowgraph.server._http.assistants import ROUTES as ASSISTANTS
from flowgraph.server._http.auth import TokenAuth
from flowgraph.server._http.context import ServerContext
from flowgraph.server._http.fields import DEFAULT_MAX_BODY
from flowgraph.server._http.runs import ROUTES as RUNS
from flowgraph.server._http.store import ROUTES as STORE
from flowgraph.server._http.threads import ROUTES as THREADS
from flowgraph.server._http.ui import ROUTES as UI
from flowgraph.server._records.registry import open_registry
from flowgraph.server._runs.executor import RunManager
from flowgraph.server._runs.graphs import GraphEntry, Graphs, assistant_uuid
from flowgraph.server._runs.queue import CeleryQueue
from flowgraph.server._wire.responses import ApiError, json_response

if TYPE_CHECKING:
    from flowgraph.store import BaseStore

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


def _long_term_of(graphs: Mapping[str, CompiledGraph], given: BaseStore | None) -> BaseStore:
    """The long-term store the /store routes serve: the one given, else the apps' own."""
    if given is not None:
        return given
    stores = {id(app.store): app.store for app in graphs.values() if app.store is not None}
    if len(stores) > 1:
        named = ", ".join(g for g, app in graphs.items() if app.store is not None)
        raise ValueError(
            f"The graphs {named} were compiled with different long-term stores; the server "
            "serves one at /store: pass create_app(..., store=...) and every app uses it"
        )
    if stores:
        (only,) = stores.values()
        store: BaseStore = only
        return store
    from flowgraph.store import InMemoryStore

    return InMemoryStore()


async def _ok(request: Request) -> Response:
    return json_response({"ok": True})


async def _root(request: Request) -> Response:
    return RedirectResponse("/ui/")


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
    store: BaseStore | None = None,
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
    any) call the API from a browser. `store` is the long-term store the
    `/store` routes serve, and the one apps compiled with a store run with
    (default: the apps' own, else an in-memory one).
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
    checkpoints = _store_of(compiled, checkpointer)
    long_term = _long_term_of(compiled, store)
    entries = []
    for graph_id, app in compiled.items():
        if app.checkpointer is not checkpoints:
            app = app.with_checkpointer(checkpoints)
        if app.store is not None and app.store is not long_term:
            app = app.with_store(long_term)  # an app with a store runs with the served one
        entries.append(GraphEntry(graph_id, app, assistant_uuid(graph_id)))
    registry = open_registry(checkpoints)
    celery = CeleryQueue(queue, [e.graph_id for e in entries]) if queue is not None else None
    manager = RunManager(Graphs(entries), registry, poll=poll, queue=celery)
    context = ServerContext(Graphs(entries), checkpoints, registry, manager, max_body, long_term)
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
        Route("/", _root, methods=["GET"]),
        Route("/ok", _ok, methods=["GET"]),
        Route("/info", _info, methods=["GET"]),
        *ASSISTANTS,
        *THREADS,
        *RUNS,
        *STORE,
        *UI,
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
