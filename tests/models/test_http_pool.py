"""Connection pooling: keep-alive reuse, limits under concurrency, clients closed with the model."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest

from flowgraph.models import DEFAULT_LIMITS, OpenAIChatModel

from ._loopback import LoopbackProcess, LoopbackServer, Reply, sse
from .test_openai import chunk, completion, model_for


def test_sequential_calls_reuse_one_kept_alive_connection(server: LoopbackServer) -> None:
    streamed = Reply(
        pieces=[sse(chunk({"content": "Hello!"}, "stop"), {"choices": [], "usage": {}})]
    )
    server.handler = lambda request: (
        streamed if request.json.get("stream") else Reply.json(completion())
    )
    with model_for(server) as model:
        for _ in range(5):
            model.invoke("hi")
            list(model.stream("hi"))  # a stream read to its end gives its connection back
    assert len(server.requests) == 10
    assert server.connections == 1


def test_a_stream_abandoned_early_releases_its_connection(server: LoopbackServer) -> None:
    body = b"".join(
        b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"x"}}]}\n\n' for _ in range(50)
    )
    server.replies = [Reply(pieces=[body[:100], body[100:]], piece_delay=0.05)]
    with model_for(server, limits=httpx.Limits(max_connections=1)) as model:
        for _ in range(3):
            stream = model.stream("hi")
            next(stream)
            stream.close()  # the reader stopped: the response must be closed, not leaked
    assert len(server.requests) == 3


def test_an_async_stream_closed_early_releases_its_connection(server: LoopbackServer) -> None:
    body = b"".join(
        b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"x"}}]}\n\n' for _ in range(50)
    )
    server.replies = [Reply(pieces=[body[:100], body[100:]], piece_delay=0.05)]

    async def main() -> None:
        async with model_for(server, limits=httpx.Limits(max_connections=1)) as model:
            for _ in range(3):
                stream = model.astream("hi")
                await anext(stream)
                await stream.aclose()

    asyncio.run(main())
    assert len(server.requests) == 3


@pytest.mark.parametrize("max_connections", [100, 25])
def test_a_thousand_concurrent_async_calls_share_the_pool(max_connections: int) -> None:
    # The server runs in its own process: in this one it would fight the client for the GIL.
    server = LoopbackProcess(json.dumps(completion()).encode(), delay=0.005)
    limits = httpx.Limits(max_connections=max_connections, keepalive_expiry=60)

    async def main() -> list[str]:
        model = OpenAIChatModel("m", base_url=f"{server.url}/v1", limits=limits)
        async with model:
            replies = await asyncio.gather(*(model.ainvoke("hi") for _ in range(1000)))
        return [r.text for r in replies]

    try:
        assert asyncio.run(main()) == ["Hello!"] * 1000
        stats = server.stats()
        assert stats["requests"] == 1000
        assert stats["connections"] <= max_connections
    finally:
        server.stop()


def test_limits_are_split_into_small_shards() -> None:
    from flowgraph.models._pool import shard_limits

    sizes = [s.max_connections for s in shard_limits(httpx.Limits(max_connections=25))]
    assert sizes == [10, 10, 5]
    assert shard_limits(httpx.Limits(max_connections=None)) == [httpx.Limits(max_connections=None)]
    keepalive = httpx.Limits(max_connections=30, max_keepalive_connections=4)
    assert [s.max_keepalive_connections for s in shard_limits(keepalive)] == [4, 4, 4]


def test_the_default_pool_keeps_a_hundred_connections_alive() -> None:
    assert DEFAULT_LIMITS.max_connections == DEFAULT_LIMITS.max_keepalive_connections == 100


def test_limits_cap_connections_for_async_and_threads(server: LoopbackServer) -> None:
    server.replies = [Reply.json(completion(), delay=0.01)]
    limits = httpx.Limits(max_connections=5, max_keepalive_connections=5, keepalive_expiry=60)
    model = model_for(server, limits=limits)

    async def main() -> None:
        await asyncio.gather(*(model.ainvoke("hi") for _ in range(100)))
        await model.aclose()

    asyncio.run(main())
    assert server.connections <= 5

    before = server.connections
    threads = [threading.Thread(target=model.invoke, args=("hi",)) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    model.close()
    assert len(server.requests) == 140
    assert server.connections - before <= 5


def test_each_event_loop_gets_its_own_async_client(server: LoopbackServer) -> None:
    server.replies = [Reply.json(completion())]
    model = model_for(server)

    async def once() -> str:
        try:
            return (await model.ainvoke("hi")).text
        finally:
            await model.aclose()

    # A connection belongs to the loop that opened it; two loops must not share one.
    assert asyncio.run(once()) == asyncio.run(once()) == "Hello!"


def test_close_and_context_managers_close_the_clients(server: LoopbackServer) -> None:
    server.replies = [Reply.json(completion())]
    with model_for(server) as model:
        model.invoke("hi")
        assert model._sync is not None
        (client,) = model._sync.clients
        assert not client.is_closed
    assert client.is_closed and model._sync is None

    async def main() -> httpx.AsyncClient:
        async with model_for(server) as model:
            await model.ainvoke("hi")
            return model._async_connections().clients[0]

    assert asyncio.run(main()).is_closed


def test_a_client_you_pass_in_is_used_and_left_open(server: LoopbackServer) -> None:
    server.replies = [Reply.json(completion())]
    with httpx.Client() as client:
        model = OpenAIChatModel("m", base_url=f"{server.url}/v1", http_client=client)
        model.invoke("hi")
        model.close()
        assert not client.is_closed
        model.invoke("hi")
    assert server.connections == 1
