"""Store routes: the long-term store (`flowgraph.store`) as LangGraph Server serves its own.

`PUT /store/items` puts, `GET /store/items?namespace=a.b&key=k` gets (null
when there is none), `DELETE /store/items` deletes, `POST
/store/items/search` searches and `POST /store/namespaces` lists, with the
shapes the SDK's `client.store` sends and reads. As there, a namespace is a
list of labels without periods (a GET names it joined by periods), and a
`ttl` is in minutes (the store's own `ttl` is in seconds). A request the
store refuses (a bad filter, key or label) is a 422 with its reason.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from flowgraph.errors import StoreError
from flowgraph.server._http.context import server_of
from flowgraph.server._http.fields import Fields, query_bool, read_body
from flowgraph.server._wire.responses import ApiError, json_response

__all__ = ["ROUTES"]


@contextlib.contextmanager
def _refusals() -> Iterator[None]:
    """What the store refuses (a bad label, key, filter or value) is the client's 422."""
    try:
        yield
    except StoreError as exc:
        raise ApiError(422, str(exc)) from None


def _labels(value: Any, where: str, *, empty: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ApiError(422, f'Field \'{where}\' must be a list of labels, like ["users", "u1"]')
    if not value and not empty:
        raise ApiError(422, f"Field '{where}' needs at least one label")
    for label in value:
        if not label or "." in label:
            raise ApiError(
                422, f"Field '{where}' has label {label!r}: labels are non-empty, without periods"
            )
    return tuple(value)


def _optional_labels(body: Fields, key: str) -> tuple[str, ...] | None:
    value = body.raw(key)
    return None if value is None else _labels(value, key, empty=True)


def _ttl_seconds(body: Fields) -> float | None:
    """The item's ttl: minutes on the wire (as LangGraph's), seconds in the store."""
    value = body.raw("ttl")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        body.fail("ttl", "a positive number of minutes")
    return float(value) * 60.0


def _index(body: Fields) -> bool | list[str] | None:
    value = body.raw("index")
    if value is None or value is False:
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    body.fail("index", "false or a list of field paths")


async def put_item(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    namespace = _labels(body.raw("namespace"), "namespace")
    key = body.required_str("key")
    value = body.obj("value")
    if value is None:
        raise ApiError(422, "Field 'value' is required (an object)")
    ttl, index = _ttl_seconds(body), _index(body)
    with _refusals():
        await server.store.aput(namespace, key, value, ttl, index=index)
    return Response(status_code=204)


async def get_item(request: Request) -> Response:
    server = server_of(request)
    given = request.query_params.get("namespace")
    if given is None:
        raise ApiError(422, "Query parameter 'namespace' is required (labels joined by '.')")
    namespace = _labels(given.split("."), "namespace")
    key = request.query_params.get("key")
    if not key:
        raise ApiError(422, "Query parameter 'key' is required")
    refresh = (
        query_bool(request, "refresh_ttl") if request.query_params.get("refresh_ttl") else None
    )
    with _refusals():
        item = await server.store.aget(namespace, key, refresh_ttl=refresh)
    return json_response(None if item is None else item.to_dict())


async def delete_item(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    namespace = _labels(body.raw("namespace"), "namespace")
    key = body.required_str("key")
    with _refusals():
        await server.store.adelete(namespace, key)
    return Response(status_code=204)


async def search_items(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    prefix = _optional_labels(body, "namespace_prefix") or ()
    conditions = body.obj("filter")
    limit = body.integer("limit", 10)
    offset = body.integer("offset", 0)
    query = body.text("query")
    refresh = body.raw("refresh_ttl")
    if refresh is not None:
        refresh = body.flag("refresh_ttl", False)
    with _refusals():
        items = await server.store.asearch(
            prefix, conditions, query, limit, offset, refresh_ttl=refresh
        )
    return json_response({"items": [item.to_dict() for item in items]})


async def list_namespaces(request: Request) -> Response:
    server = server_of(request)
    body = Fields(await read_body(request, limit=server.max_body))
    prefix = _optional_labels(body, "prefix")
    suffix = _optional_labels(body, "suffix")
    max_depth = body.integer("max_depth", 0, minimum=1) if body.has("max_depth") else None
    limit = body.integer("limit", 100)
    offset = body.integer("offset", 0)
    with _refusals():
        found = await server.store.alist_namespaces(
            prefix or None, suffix=suffix or None, max_depth=max_depth, limit=limit, offset=offset
        )
    return json_response({"namespaces": [list(n) for n in found]})


ROUTES = [
    Route("/store/items", put_item, methods=["PUT"]),
    Route("/store/items", get_item, methods=["GET"]),
    Route("/store/items", delete_item, methods=["DELETE"]),
    Route("/store/items/search", search_items, methods=["POST"]),
    Route("/store/namespaces", list_namespaces, methods=["POST"]),
]
