"""The /store routes as the official client calls them (`client.store`), on every backend.

`flowgraph serve --db URL` serves the long-term store at the same location
as the checkpoints (a SQLite file, PostgreSQL, Redis); `create_app` without
one serves an in-memory store. An app compiled with a store runs with the
served one, so what a client puts, a node reads, and the other way round.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from flowgraph.server import running

from . import apps
from .conftest import Connect, Serve, store_location

HI = {"messages": [{"role": "user", "content": "remember the milk"}]}


@pytest.fixture(params=["memory", "sqlite", "postgres", "redis"])
def client(
    request: pytest.FixtureRequest, serve: Serve, connect: Connect, tmp_path: Path
) -> Iterator[SyncLangGraphClient]:
    """The official client of a server whose /store is backed by `request.param`."""
    if request.param == "memory":  # no --db spells it: the Python API's default
        with running({"remember": apps.remember}) as url:
            sdk = get_sync_client(url=url, timeout=(5, 60, 60, 5))
            yield sdk
            sdk.close()
        return
    yield connect(serve(store_location(request.param, tmp_path), "remember"))


def test_put_get_search_list_and_delete_through_the_client(
    client: SyncLangGraphClient,
) -> None:
    me = uuid.uuid4().hex[:8]  # shared servers: every namespace of this test starts with it
    store = client.store
    store.put_item([me, "u1", "prefs"], "theme", {"color": "green", "stars": 3})
    store.put_item([me, "u1", "facts"], "city", {"name": "Lyon", "stars": 5})
    store.put_item([me, "u2", "facts"], "city", {"name": "Oslo", "stars": 4})
    store.put_item([me, "u1", "prefs"], "theme", {"color": "blue", "stars": 3})  # replaced

    item = store.get_item([me, "u1", "prefs"], "theme")
    missing = store.get_item([me, "u1", "prefs"], "nothing")
    everything = store.search_items([me], limit=10)["items"]
    good = store.search_items([me], filter={"stars": {"$gte": 4}})["items"]
    page = store.search_items([me], limit=1, offset=1)["items"]
    found = store.search_items([me], query="Lyon")["items"]
    namespaces = store.list_namespaces(prefix=[me])["namespaces"]
    shallow = store.list_namespaces(prefix=[me], max_depth=2)["namespaces"]
    facts = store.list_namespaces(prefix=[me], suffix=["facts"])["namespaces"]
    store.delete_item([me, "u2", "facts"], "city")

    assert item is not None and item["value"] == {"color": "blue", "stars": 3}
    assert item["namespace"] == [me, "u1", "prefs"] and item["key"] == "theme"
    assert item["updated_at"] >= item["created_at"] and "T" in item["created_at"]
    assert missing is None
    assert len(everything) == 3
    assert everything[0]["value"]["color"] == "blue"  # the newest write first
    assert sorted(i["value"]["name"] for i in good) == ["Lyon", "Oslo"]
    assert page == [everything[1]]
    assert [i["value"]["name"] for i in found] == ["Lyon"] and found[0]["score"] > 0
    assert namespaces == [[me, "u1", "facts"], [me, "u1", "prefs"], [me, "u2", "facts"]]
    assert shallow == [[me, "u1"], [me, "u2"]]
    assert facts == [[me, "u1", "facts"], [me, "u2", "facts"]]
    assert store.get_item([me, "u2", "facts"], "city") is None
    assert len(store.search_items([me])["items"]) == 2


def test_a_node_and_the_client_share_the_store(client: SyncLangGraphClient) -> None:
    user = uuid.uuid4().hex[:8]
    client.store.put_item(["notes", user], "first", {"text": "buy bread"})

    out = client.runs.wait(None, "remember", input=HI, config={"configurable": {"user": user}})
    written = client.store.get_item(["notes", user], "n1")

    assert out["messages"][-1]["content"] == "notes: buy bread, remember the milk"
    assert written is not None and written["value"] == {"text": "remember the milk"}


def test_the_store_outlives_the_server_process(serve: Serve, connect: Connect) -> None:
    """`--db` names the long-term store too (also when no app uses one): another process on
    the file sees the items."""
    first = serve(None, "agent")
    connect(first).store.put_item(["kept"], "k", {"v": 1}, ttl=10)
    first.stop()

    again = connect(serve(None, "agent")).store.get_item(["kept"], "k")

    assert again is not None and again["value"] == {"v": 1}


def test_ttl_is_in_minutes_as_the_client_says(serve: Serve, connect: Connect) -> None:
    store = connect(serve(None, "agent")).store
    store.put_item(["ttl"], "short", {"v": 1}, ttl=0.002)  # type: ignore[arg-type]  # 0.12 s
    store.put_item(["ttl"], "long", {"v": 2}, ttl=0.05)  # type: ignore[arg-type]  # 3 s
    time.sleep(0.6)

    assert store.get_item(["ttl"], "short") is None
    assert store.get_item(["ttl"], "long") is not None


def test_store_requests_are_checked_and_need_the_token(serve: Serve) -> None:
    server = serve(None, "remember", token="s3cret")
    http = httpx.Client(base_url=server.url, headers={"x-api-key": "s3cret"}, timeout=10)

    def detail(method: str, path: str, **kwargs: object) -> str:
        response = http.request(method, path, **kwargs)  # type: ignore[arg-type]
        assert response.status_code == 422, response.text
        return str(response.json()["detail"])

    item = {"namespace": ["a"], "key": "k", "value": {"x": 1}}
    refused = httpx.put(f"{server.url}/store/items", json=item, timeout=10)
    assert refused.status_code == 401
    assert http.put("/store/items", json=item).status_code == 204

    assert "'namespace'" in detail("PUT", "/store/items", json={**item, "namespace": "a"})
    assert "periods" in detail("PUT", "/store/items", json={**item, "namespace": ["a.b"]})
    assert "'key'" in detail("PUT", "/store/items", json={"namespace": ["a"], "value": {}})
    assert "'value'" in detail("PUT", "/store/items", json={**item, "value": [1]})
    assert "'ttl'" in detail("PUT", "/store/items", json={**item, "ttl": -1})
    assert "'index'" in detail("PUT", "/store/items", json={**item, "index": True})
    assert "'key'" in detail("GET", "/store/items", params={"namespace": "a"})
    assert "'namespace'" in detail("GET", "/store/items", params={"key": "k"})
    assert "$near" in detail(
        "POST",
        "/store/items/search",
        json={"namespace_prefix": ["a"], "filter": {"x": {"$near": 1}}},
    )
    assert "'limit'" in detail("POST", "/store/items/search", json={"limit": "all"})
    # beyond a 64-bit integer (SQLite's range): a 422 naming the field, not an OverflowError
    too_far = 2**63
    assert "'offset'" in detail("POST", "/store/items/search", json={"offset": too_far})
    assert "'limit'" in detail("POST", "/store/namespaces", json={"limit": too_far})
    assert "'offset'" in detail("POST", "/threads/search", json={"offset": too_far})
    assert http.post("/store/items/search", json={"offset": too_far - 1}).json() == {"items": []}
    assert "'max_depth'" in detail("POST", "/store/namespaces", json={"max_depth": 0})
    assert "'prefix'" in detail("POST", "/store/namespaces", json={"prefix": [1]})
    assert http.get("/store/items", params={"namespace": "a", "key": "k"}).json()["value"] == {
        "x": 1
    }
    http.close()
