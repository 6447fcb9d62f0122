"""A loopback HTTP/1.1 server for speaking providers' wire formats to the adapters.

It runs an asyncio loop in a thread, so sync and async clients can both
talk to it; it records every request, counts the connections it accepted,
and answers from a list of `Reply`s (one per request, the last one
repeated) or a function of the request. A reply can be a whole body, or
pieces sent one by one with chunked encoding (each flushed, so the client
really receives them apart), and can stall, or cut the connection mid-body.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    pieces: Sequence[bytes] | None = None
    """Send these as separate HTTP chunks instead of `body`."""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    delay: float = 0.0
    """Seconds to wait before answering at all."""
    piece_delay: float = 0.002
    cut_after: int | None = None
    """Abort the connection after sending this many pieces (no terminating chunk)."""

    @classmethod
    def json(cls, data: Any, status: int = 200, **kw: Any) -> Reply:
        return cls(status=status, body=json.dumps(data).encode(), **kw)


Handler = Callable[[Recorded], Reply]


class LoopbackServer:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.connections = 0
        self.replies: list[Reply] = [Reply.json({})]
        self.handler: Handler | None = None
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LoopbackServer:
        self._thread.start()
        self._ready.wait(5)
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            self._server = await asyncio.start_server(
                self._connection, "127.0.0.1", 0, backlog=2048
            )
            self.port = self._server.sockets[0].getsockname()[1]

        self._loop.run_until_complete(start())
        self._ready.set()
        self._loop.run_forever()

    def _answer(self, request: Recorded) -> Reply:
        self.requests.append(request)
        if self.handler is not None:
            return self.handler(request)
        index = min(len(self.requests), len(self.replies)) - 1
        return self.replies[index]

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                reply = self._answer(Recorded(method, path, headers, body))
                if not await self._send(writer, reply):
                    return
        except (ConnectionError, asyncio.CancelledError):
            return
        finally:
            self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _send(self, writer: asyncio.StreamWriter, reply: Reply) -> bool:
        if reply.delay:
            await asyncio.sleep(reply.delay)
        phrase = {200: "OK"}.get(reply.status, "Status")
        head = [f"HTTP/1.1 {reply.status} {phrase}", f"content-type: {reply.content_type}"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        if reply.pieces is None:
            head.append(f"content-length: {len(reply.body)}")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + reply.body)
            await writer.drain()
            return True
        head.append("transfer-encoding: chunked")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await writer.drain()
        for sent, piece in enumerate(reply.pieces):
            if reply.cut_after is not None and sent >= reply.cut_after:
                writer.transport.abort()
                return False
            if piece:
                writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                await writer.drain()
            if reply.piece_delay:
                await asyncio.sleep(reply.piece_delay)
        if reply.cut_after is not None:
            writer.transport.abort()
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


# ------------------------------------------------------------- body helpers


def sse(*events: Any, done: bool = True) -> bytes:
    """OpenAI-style SSE: each event as `data: {json}`; then `data: [DONE]`."""
    out = "".join(f"data: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events)
    if done:
        out += "data: [DONE]\n\n"
    return out.encode()


def named_sse(*events: dict[str, Any]) -> bytes:
    """Anthropic-style SSE: `event: <type>` then `data: {json}`."""
    return "".join(
        f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events
    ).encode()


def ndjson(*lines: Any) -> bytes:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()


def split_awkwardly(body: bytes) -> list[bytes]:
    """Pieces cut inside UTF-8 characters, inside JSON strings and between CR and LF."""
    cuts: set[int] = set()
    for index in range(1, len(body)):
        byte = body[index]
        if 0x80 <= byte < 0xC0:  # a UTF-8 continuation byte: cut inside the character
            cuts.add(index)
        if body[index - 1 : index] == b"\r":
            cuts.add(index)
    cuts.update(range(5, len(body), 11))  # and regularly, landing inside strings and keys
    points = sorted(cuts)
    return [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# ------------------------------------------------- a server in its own process


class LoopbackProcess:
    """The same server in a child process, answering every request with one reply.

    For load: a server in a thread of the test process competes with the
    client for the GIL, and the client would measure the server. Ask for
    `stats()` (connections accepted, requests served) over its stdin.
    """

    def __init__(self, body: bytes, delay: float = 0.0) -> None:
        import subprocess
        import sys

        self._process = subprocess.Popen(
            [sys.executable, __file__, body.decode(), str(delay)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        self.port = int(self._process.stdout.readline())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stats(self) -> dict[str, int]:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write("stats\n")
        self._process.stdin.flush()
        stats: dict[str, int] = json.loads(self._process.stdout.readline())
        return stats

    def stop(self) -> None:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.close()
        self._process.wait(10)
        self._process.stdout.close()


def _serve(body: str, delay: float) -> None:
    import sys

    server = LoopbackServer().start()
    server.replies = [Reply(body=body.encode(), delay=delay)]
    print(server.port, flush=True)
    for _ in sys.stdin:
        stats = {"connections": server.connections, "requests": len(server.requests)}
        print(json.dumps(stats), flush=True)
    server.stop()


if __name__ == "__main__":
    import sys

    _serve(sys.argv[1], float(sys.argv[2]))
