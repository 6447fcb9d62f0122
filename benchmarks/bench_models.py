"""Chat model calls over HTTP: 1,000 async calls at a concurrency of 100.

A loopback server in its own process answers every Chat Completions
request after 20 ms, so the ideal wall time is 20 ms x 1,000 / 100 =
200 ms. Each run uses a fresh `OpenAIChatModel` (default limits: 100
connections, all kept alive) and reports:

- wall time, and its ratio to the ideal;
- connections the server accepted (a pool that works opens ~100, not 1,000);
- client overhead per call: the client process's CPU time / calls, i.e.
  what building the request, httpx, and parsing the reply cost; for
  reference, the same figure for bare `httpx.AsyncClient.post` calls.

The server runs in a child process so the client's figures do not include
it (and the two do not compete for one GIL). Figures are medians of 3 runs;
run on a quiet machine.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import statistics
import time
from multiprocessing.sharedctypes import Synchronized
from typing import Any

import httpx

from benchmarks._harness import Figure, scenario
from flowgraph.models import OpenAIChatModel

CALLS = 1000
CONCURRENCY = 100
DELAY = 0.020
IDEAL = DELAY * CALLS / CONCURRENCY
REPEAT = 3

REPLY = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1,
        "model": "bench",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello from the benchmark."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    }
).encode()


# -------------------------------------------------------------- the server


def _serve(port: Any, connections: Synchronized[int], ready: Any, stop: Any) -> None:
    """A minimal HTTP/1.1 keep-alive server: every request gets REPLY after DELAY."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with connections.get_lock():
            connections.value += 1
        head = (
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n" % len(REPLY)
        )
        try:
            while True:
                request = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in request.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                await asyncio.sleep(DELAY)
                writer.write(head + REPLY)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=4096)
        port.value = server.sockets[0].getsockname()[1]
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        server.close()

    asyncio.run(main())


class _Server:
    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.port = context.Value("i", 0)
        self.connections = context.Value("i", 0)
        self.ready = context.Event()
        self.stop_event = context.Event()
        self.process = context.Process(
            target=_serve,
            args=(self.port, self.connections, self.ready, self.stop_event),
            daemon=True,
        )
        self.process.start()
        if not self.ready.wait(30):
            raise RuntimeError("the benchmark's loopback server did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port.value}"

    def accepted(self) -> int:
        with self.connections.get_lock():
            return int(self.connections.value)

    def stop(self) -> None:
        self.stop_event.set()
        self.process.join(10)


# ------------------------------------------------------------------ the runs


async def _ours(url: str) -> None:
    model = OpenAIChatModel("bench", base_url=f"{url}/v1", api_key="k")
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one() -> None:
        async with gate:
            reply = await model.ainvoke("Say hello.")
        assert reply.text == "Hello from the benchmark."

    async with model:
        await asyncio.gather(*(one() for _ in range(CALLS)))


async def _bare_httpx(url: str) -> None:
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    body = {"model": "bench", "messages": [{"role": "user", "content": "Say hello."}]}
    gate = asyncio.Semaphore(CONCURRENCY)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def one() -> None:
            async with gate:
                response = await client.post(f"{url}/v1/chat/completions", json=body)
            assert response.json()["choices"][0]["message"]["content"]

        await asyncio.gather(*(one() for _ in range(CALLS)))


def _measure(server: _Server, run: Any) -> tuple[float, float, int]:
    """(wall seconds, client CPU seconds, connections accepted) of one run."""
    before = server.accepted()
    loop = asyncio.new_event_loop()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        loop.run_until_complete(run(server.url))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        loop.close()
    return wall, cpu, server.accepted() - before


@scenario("model_calls")
def bench_model_calls() -> list[Figure]:
    """1,000 async calls, concurrency 100, server answering after 20 ms."""
    server = _Server()
    try:
        _measure(server, _ours)  # warm up: imports, the TLS context, the server's loop
        ours = [_measure(server, _ours) for _ in range(REPEAT)]
        bare = [_measure(server, _bare_httpx) for _ in range(REPEAT)]
    finally:
        server.stop()
    wall = statistics.median(w for w, _, _ in ours)
    cpu = statistics.median(c for _, c, _ in ours)
    bare_cpu = statistics.median(c for _, c, _ in bare)
    return [
        Figure("wall time, 1,000 calls @ 100", "ms", wall * 1e3),
        Figure("wall time / ideal (200 ms)", "x", wall / IDEAL),
        Figure("connections opened (max of runs)", "count", max(n for _, _, n in ours)),
        Figure("client overhead per call", "µs", cpu / CALLS * 1e6),
        Figure("  bare httpx.AsyncClient, same calls", "µs", bare_cpu / CALLS * 1e6),
    ]


if __name__ == "__main__":
    for figure in bench_model_calls():
        print(f"{figure.name:<40} {figure.ours:>12,.1f} {figure.unit}")
