"""Assistant routes: one assistant per served graph (search, count, get, graph, schemas).

`GET /assistants/{id}/graph` answers LangGraph's drawable-graph JSON; with
`format=mermaid` or `format=svg` it answers the diagram flowgraph.viz
draws instead (for the inspector).
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from flowgraph.server._http.context import server_of
from flowgraph.server._http.fields import Fields, query_bool, read_body
from flowgraph.server._http.threads import contains
from flowgraph.server._runs.graphs import GraphEntry
from flowgraph.server._wire.responses import ApiError, json_response

__all__ = ["ROUTES"]


def _matching(entries: list[GraphEntry], body: Fields) -> list[GraphEntry]:
    graph_id = body.text("graph_id")
    name = body.text("name")
    metadata = body.obj("metadata")
    return [
        e
        for e in entries
        if (graph_id is None or e.graph_id == graph_id)
        and (name is None or e.graph_id == name)
        and (not metadata or contains(e.assistant()["metadata"], metadata))
    ]


async def search(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    limit = body.integer("limit", 10)
    offset = body.integer("offset", 0)
    found = [e.assistant() for e in _matching(server.graphs.entries, body)]
    sort_by = body.choice(
        "sort_by", ("assistant_id", "graph_id", "name", "created_at", "updated_at")
    )
    if sort_by is not None:
        order = body.choice("sort_order", ("asc", "desc"), "asc")
        found.sort(key=lambda a: str(a[sort_by]), reverse=order == "desc")
    return json_response(body.selected(found[offset : offset + limit]))


async def count(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    return json_response(len(_matching(server.graphs.entries, body)))


async def get(request: Request) -> Response:
    entry = server_of(request).graphs.get(request.path_params["assistant_id"])
    return json_response(entry.assistant())


async def graph(request: Request) -> Response:
    entry = server_of(request).graphs.get(request.path_params["assistant_id"])
    fmt = request.query_params.get("format")
    if fmt is None or fmt == "json":
        xray = request.query_params.get("xray", "false").lower() not in ("false", "0", "")
        return json_response(entry.graph_json(xray=xray))
    from flowgraph import viz

    if fmt == "mermaid":
        return Response(await asyncio.to_thread(viz.to_mermaid, entry.app), media_type="text/plain")
    if fmt == "svg":
        return Response(await asyncio.to_thread(viz.to_svg, entry.app), media_type="image/svg+xml")
    raise ApiError(422, f"Query parameter 'format' is {fmt!r}; expected json, mermaid or svg")


async def schemas(request: Request) -> Response:
    entry = server_of(request).graphs.get(request.path_params["assistant_id"])
    return json_response(await asyncio.to_thread(entry.schemas))


async def subgraphs(request: Request) -> Response:
    server_of(request).graphs.get(request.path_params["assistant_id"])
    query_bool(request, "recurse")
    return json_response({})


async def unsupported(request: Request) -> Response:
    raise ApiError(
        405,
        "This server's assistants are its graphs, fixed when it starts (flowgraph serve "
        "ID=APP); they cannot be created, changed or deleted over the API",
    )


ROUTES = [
    Route("/assistants/search", search, methods=["POST"]),
    Route("/assistants/count", count, methods=["POST"]),
    Route("/assistants", unsupported, methods=["POST"]),
    Route("/assistants/{assistant_id}", get, methods=["GET"]),
    Route("/assistants/{assistant_id}", unsupported, methods=["PATCH", "DELETE"]),
    Route("/assistants/{assistant_id}/graph", graph, methods=["GET"]),
    Route("/assistants/{assistant_id}/schemas", schemas, methods=["GET"]),
    Route("/assistants/{assistant_id}/subgraphs", subgraphs, methods=["GET"]),
]
