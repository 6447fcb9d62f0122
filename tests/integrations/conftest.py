"""Fixtures of the integration tests: real MCP servers, and OpenTelemetry spans read back.

MCP: processes over stdio and streamable HTTP.
`mcp_server_app.py` (the SDK's MCPServer) is the server. Over stdio the
client starts it itself; over HTTP a fixture starts it on a free loopback
port and waits until it answers.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ._spans import Spans, traced

pytest.importorskip("mcp", reason="the MCP SDK is the `mcp` extra: pip install 'flowgraph[mcp]'")

HERE = Path(__file__).resolve().parent
SERVER = HERE / "mcp_server_app.py"


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (anyio's pytest plugin), as flowgraph's runs do."""
    return "asyncio"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {timeout} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


@dataclass
class HttpServer:
    """An MCP server process on a loopback port; `restart` brings it back on the same port."""

    port: int
    command: list[str]
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def kill(self) -> None:
        stop(self.process)

    def restart(self) -> None:
        self.kill()
        self.process = subprocess.Popen(self.command, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.process)


@pytest.fixture
def start_http_server() -> Iterator[Callable[..., HttpServer]]:
    """Starts HTTP server processes (`start(script=SERVER, *args)`); kills them after the test."""
    started: list[HttpServer] = []

    def start(script: Path = SERVER, *args: str) -> HttpServer:
        port = free_port()
        command = [sys.executable, str(script), *args, "--port", str(port)]
        server = HttpServer(port, command, subprocess.Popen(command, stderr=subprocess.DEVNULL))
        started.append(server)
        wait_for_port(port, server.process)
        return server

    yield start
    for server in started:
        stop(server.process)


def stdio_connection(**extra: Any) -> dict[str, Any]:
    return {"transport": "stdio", "command": sys.executable, "args": [str(SERVER)], **extra}


@pytest.fixture(params=["stdio", "http"])
def connection(
    request: pytest.FixtureRequest, start_http_server: Callable[..., HttpServer]
) -> Callable[..., dict[str, Any]]:
    """A connection to a fresh test server, over each transport (`connection(timeout=...)`)."""

    def make(**extra: Any) -> dict[str, Any]:
        if request.param == "stdio":
            return stdio_connection(**extra)
        return {"transport": "streamable_http", "url": start_http_server().url, **extra}

    return make


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent) counts as gone
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def wait_gone(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            raise AssertionError(f"process {pid} is still running after {timeout} s")
        time.sleep(0.02)


@pytest.fixture
def spans() -> Iterator[Spans]:
    """Every flowgraph run of the test traced into memory (the SDK), without message text."""
    yield from traced()


@pytest.fixture
def spans_with_content() -> Iterator[Spans]:
    """The same, with `capture_content=True`."""
    yield from traced(capture_content=True)
