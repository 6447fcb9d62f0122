"""Serving over HTTP: what `flowgraph serve` adds to a run, to a token, and under 100 clients.

Three scenarios, each driving a real server process with the official
`langgraph-sdk` client from this process (which shares the machine's two
cores with the server), for flowgraph and, when it is available, for
LangGraph's own in-memory dev server (`langgraph dev`, from
`langgraph-cli[inmem]`) serving the same graphs (`_server_apps.py`):

- `server_wait`: `runs.wait` of a one-node graph on a new thread, against a
  direct `invoke` of the same graph in this process (ms, median of 40); the
  overhead is the difference. flowgraph serves from memory, as `langgraph
  dev` does; a row on a SQLite file follows.
- `server_tokens`: a model node streaming 200 words as 200 chunks with no
  delay, through `messages-tuple`: time to the first token from the request
  and tokens per second after it (medians of 10 runs).
- `server_clients`: 100 clients at once, each streaming one such run on a
  thread of its own (`messages-tuple`): p50 and p99 of a stream's latency
  (request to last event), errors, and the wall time of the whole burst.

LangGraph's dev server is not installed with flowgraph: it pins its own
versions of shared packages, so it lives in a virtualenv of its own, named
by $FLOWGRAPH_BENCH_LANGGRAPH_DEV (the `langgraph` executable there):

    python -m venv /tmp/lgdev && /tmp/lgdev/bin/pip install 'langgraph-cli[inmem]'
    FLOWGRAPH_BENCH_LANGGRAPH_DEV=/tmp/lgdev/bin/langgraph python -m benchmarks server
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from benchmarks._harness import Figure, scenario
from benchmarks._server_apps import TOKENS, build, write_langgraph_project
from flowgraph.checkpoint import MemoryCheckpointer

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH_DEV = os.environ.get("FLOWGRAPH_BENCH_LANGGRAPH_DEV")
HI = {"messages": [{"role": "user", "content": "hi"}]}
CLIENTS = 100


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _wait_ok(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server at {url} exited with {process.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the server at {url} did not answer in {timeout} s")


@contextlib.contextmanager
def _process(command: list[str], cwd: Path, env: dict[str, str], port: int) -> Iterator[str]:
    url = f"http://127.0.0.1:{port}"
    with (cwd / f"server-{port}.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=cwd, env={**os.environ, **env}, stdout=log,
                                   stderr=subprocess.STDOUT)  # fmt: skip
    try:
        _wait_ok(url, process, timeout=90)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextlib.contextmanager
def flowgraph_server(store: str = "memory") -> Iterator[str]:
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "benchmarks._server_apps", str(port), store]
        with _process(command, Path(tmp), {"PYTHONPATH": str(ROOT)}, port) as url:
            yield url


@contextlib.contextmanager
def langgraph_server() -> Iterator[str | None]:
    """`langgraph dev` on the same graphs, or None when it is not installed."""
    if not LANGGRAPH_DEV or not Path(LANGGRAPH_DEV).exists():
        yield None
        return
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        write_langgraph_project(project)
        command = [LANGGRAPH_DEV, "dev", "--no-browser", "--no-reload", "--port", str(port)]
        env = {"LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1",
               "PYTHONPATH": ""}  # fmt: skip
        with _process(command, project, env, port) as url:
            yield url


def _client(url: str) -> Any:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=url, api_key=None)


def _wait_ms(url: str, repeat: int = 40) -> float:
    client = _client(url)
    times = []
    try:
        for i in range(repeat + 3):
            thread_id = client.threads.create()["thread_id"]
            start = time.perf_counter()
            out = client.runs.wait(thread_id, "echo", input=HI)
            elapsed = time.perf_counter() - start
            assert out["messages"][-1]["content"] == "ok", out
            if i >= 3:
                times.append(elapsed)
    finally:
        client.close()
    return statistics.median(times) * 1000


def _invoke_ms(repeat: int = 40) -> float:
    app = build()["echo"].with_checkpointer(MemoryCheckpointer())
    times = []
    for i in range(repeat + 3):
        start = time.perf_counter()
        app.invoke({"messages": [("user", "hi")]}, thread_id=uuid.uuid4().hex)
        if i >= 3:
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


@scenario("server_wait")
def server_wait() -> list[Figure]:
    invoke = _invoke_ms()
    with flowgraph_server() as url:
        ours = _wait_ms(url)
    with tempfile.TemporaryDirectory() as tmp, flowgraph_server(str(Path(tmp) / "b.db")) as url:
        on_sqlite = _wait_ms(url)
    with langgraph_server() as url:
        theirs = _wait_ms(url) if url else None
    return [
        Figure("direct invoke (memory)", "ms", invoke),
        Figure("runs.wait round trip (memory)", "ms", ours, theirs),
        Figure("runs.wait overhead over invoke", "ms", ours - invoke),
        Figure("runs.wait round trip (SQLite file)", "ms", on_sqlite),
    ]


def _stream_tokens(url: str, repeat: int = 10) -> tuple[float, float]:
    client = _client(url)
    firsts, rates = [], []
    try:
        for _ in range(repeat + 1):
            thread_id = client.threads.create()["thread_id"]
            start = time.perf_counter()
            stamps = []
            for part in client.runs.stream(
                thread_id, "chat", input=HI, stream_mode="messages-tuple"
            ):
                if part.event == "messages" and part.data[0].get("content"):
                    stamps.append(time.perf_counter())
            assert len(stamps) >= TOKENS, len(stamps)
            firsts.append(stamps[0] - start)
            rates.append((len(stamps) - 1) / (stamps[-1] - stamps[0]))
    finally:
        client.close()
    return statistics.median(firsts[1:]) * 1000, statistics.median(rates[1:])


@scenario("server_tokens")
def server_tokens() -> list[Figure]:
    with flowgraph_server() as url:
        ours_first, ours_rate = _stream_tokens(url)
    with langgraph_server() as url:
        theirs = _stream_tokens(url) if url else (None, None)
    return [
        Figure("time to first token (messages-tuple)", "ms", ours_first, theirs[0]),
        Figure("tokens/s after the first", "tok/s", ours_rate, theirs[1], lower_is_better=False),
    ]


async def _burst(url: str, clients: int) -> tuple[list[float], int, float]:
    from langgraph_sdk import get_client

    async def one(client: Any) -> float:
        thread_id = (await client.threads.create())["thread_id"]
        start = time.perf_counter()
        tokens = 0
        async for part in client.runs.stream(
            thread_id, "chat", input=HI, stream_mode="messages-tuple"
        ):
            if part.event == "messages":
                tokens += 1
            elif part.event == "error":
                raise RuntimeError(part.data)
        if tokens < TOKENS:
            raise RuntimeError(f"only {tokens} tokens")
        return time.perf_counter() - start

    users = [get_client(url=url, api_key=None, timeout=300) for _ in range(clients)]
    start = time.perf_counter()
    try:
        results = await asyncio.gather(*(one(u) for u in users), return_exceptions=True)
    finally:
        await asyncio.gather(*(u.aclose() for u in users))
    wall = time.perf_counter() - start
    latencies = [r for r in results if isinstance(r, float)]
    return latencies, len(results) - len(latencies), wall


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


@scenario("server_clients")
def server_clients() -> list[Figure]:
    with flowgraph_server() as url:
        ours = asyncio.run(_burst(url, CLIENTS))
    with langgraph_server() as url:
        theirs = asyncio.run(_burst(url, CLIENTS)) if url else None
    figures = []
    for name, pick, unit in (
        (f"p50 stream latency, {CLIENTS} clients", lambda r: _percentile(r[0], 0.5), "ms"),
        (f"p99 stream latency, {CLIENTS} clients", lambda r: _percentile(r[0], 0.99), "ms"),
        (f"wall time of {CLIENTS} streams", lambda r: r[2] * 1000, "ms"),
    ):
        figures.append(Figure(name, unit, pick(ours), pick(theirs) if theirs else None))
    figures.append(Figure(f"errors in {CLIENTS} streams", "count", ours[1],
                          theirs[1] if theirs else None))  # fmt: skip
    return figures
