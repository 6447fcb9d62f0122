"""One MCP server: its connection settings, its live session, and reconnect-once.

A session is opened on first use and kept: every tool call of a client
reuses it. It lives in a *holder* task on the client's portal loop, which
enters the SDK's `Client` (transport, then session) and waits until the
client closes. Calls run in tasks of their own and race the holder, so a
transport that fails (a server process that died, an HTTP server that went
away) ends the holder and fails the call at once, instead of cancelling the
caller along with the SDK's task group.

A request that finds the connection gone opens a new session and is sent
once more; a second failure is an `MCPConnectionError`. A call that was in
flight when the connection dropped is therefore sent twice, and the server
may have started it the first time: MCP has no way to ask.

Everything here runs on the portal loop only.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import logging
import os
import shlex
import sys
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, TextIO, TypeVar

import anyio
import httpx2
import mcp
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CONNECTION_CLOSED, INVALID_REQUEST, REQUEST_TIMEOUT, Implementation

from flowgraph.errors import MCPConnectionError, MCPError, MCPTimeoutError

__all__ = ["ServerConfig", "ServerConnection", "parse_config"]

logger = logging.getLogger("flowgraph.integrations.mcp")

T = TypeVar("T")

Transport = Literal["stdio", "streamable_http"]
_TRANSPORTS = {"stdio": "stdio", "streamable_http": "streamable_http", "http": "streamable_http"}
_KEYS: dict[str, frozenset[str]] = {
    "stdio": frozenset({"transport", "command", "args", "env", "cwd", "encoding"}),
    "streamable_http": frozenset({"transport", "url", "headers", "auth"}),
}
_COMMON_KEYS = frozenset({"timeout", "connect_timeout"})
_STDERR_LINES = 20


def _version() -> str:
    try:
        return importlib.metadata.version("flowgraph")
    except importlib.metadata.PackageNotFoundError:  # a source checkout on sys.path
        return "0"


_CLIENT_INFO = Implementation(name="flowgraph", version=_version())


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """A server's connection, checked: how to reach it and how long to wait for it."""

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: str | None = None
    encoding: str = "utf-8"
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    auth: httpx2.Auth | None = None
    timeout: float | None = None
    """Seconds a tool call may take (None: as long as it takes)."""
    connect_timeout: float = 30.0
    """Seconds to start the server and complete the MCP handshake."""

    def describe(self) -> str:
        """`python server.py` or the URL: what a message shows to identify the server."""
        if self.transport == "stdio":
            return shlex.join([self.command, *self.args])
        return self.url


def _seconds(name: str, key: str, value: Any, *, optional: bool) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(
            f"MCP server '{name}': '{key}' must be a positive number of seconds, not {value!r}"
        )
    return float(value)


def parse_config(
    name: str, raw: Mapping[str, Any], *, timeout: float | None, connect_timeout: float
) -> ServerConfig:
    """Check one connection mapping (langchain-mcp-adapters' spelling) and fill defaults."""
    if not isinstance(raw, Mapping):
        raise TypeError(
            f"MCP server '{name}': its connection must be a dict such as "
            '{"transport": "stdio", "command": "python", "args": ["server.py"]}, '
            f"not {type(raw).__name__}"
        )
    given = raw.get("transport")
    if given is None:
        given = "stdio" if "command" in raw else "streamable_http" if "url" in raw else None
    transport = _TRANSPORTS.get(str(given)) if given is not None else None
    if transport is None:
        raise ValueError(
            f"MCP server '{name}': transport {given!r} is not supported; use 'stdio' (with "
            "'command') or 'streamable_http' (also 'http', with 'url')"
        )
    unknown = sorted(set(raw) - _KEYS[transport] - _COMMON_KEYS)
    if unknown:
        accepted = ", ".join(sorted(_KEYS[transport] | _COMMON_KEYS))
        raise ValueError(
            f"MCP server '{name}': unknown key(s) {', '.join(map(repr, unknown))} for "
            f"transport '{transport}'; it accepts {accepted}"
        )
    call_timeout = _seconds(name, "timeout", raw.get("timeout", timeout), optional=True)
    startup = _seconds(
        name, "connect_timeout", raw.get("connect_timeout", connect_timeout), optional=False
    )
    assert startup is not None
    if transport == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command:
            raise ValueError(f"MCP server '{name}': a stdio connection needs 'command' (a string)")
        args = raw.get("args") or []
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise ValueError(f"MCP server '{name}': 'args' must be a list of strings")
        cwd = raw.get("cwd")
        return ServerConfig(
            name,
            "stdio",
            command=command,
            args=tuple(args),
            env=dict(raw["env"]) if raw.get("env") is not None else None,
            cwd=str(Path(cwd)) if cwd is not None else None,
            encoding=str(raw.get("encoding", "utf-8")),
            timeout=call_timeout,
            connect_timeout=startup,
        )
    url = raw.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(
            f"MCP server '{name}': a streamable_http connection needs 'url', an http(s) URL "
            f"such as 'http://127.0.0.1:8000/mcp', not {url!r}"
        )
    return ServerConfig(
        name,
        "streamable_http",
        url=url,
        headers=dict(raw.get("headers") or {}),
        auth=raw.get("auth"),
        timeout=call_timeout,
        connect_timeout=startup,
    )


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups: what went wrong."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    exc = _leaf(exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Dropped(Exception):
    """The connection is gone; a new session may succeed."""


def _is_dropped(exc: BaseException) -> bool:
    exc = _leaf(exc)
    if isinstance(exc, mcp.MCPError):
        if exc.code == CONNECTION_CLOSED:
            return True
        # streamable HTTP: the server no longer knows the session (it restarted)
        return exc.code == INVALID_REQUEST and exc.message == "Session terminated"
    return isinstance(
        exc,
        (
            OSError,
            EOFError,
            httpx2.TransportError,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            anyio.EndOfStream,
        ),
    )


class _StderrTail:
    """The server's stderr, passed on to ours, with its last lines kept for error messages."""

    def __init__(self, target: IO[str]) -> None:
        read_fd, write_fd = os.pipe()
        self.file: TextIO = open(write_fd, "w", encoding="utf-8")  # closed by release()
        self._lines: deque[str] = deque(maxlen=_STDERR_LINES)
        self._target = target
        self._thread = threading.Thread(
            target=self._pump, args=(read_fd,), name="flowgraph-mcp-stderr", daemon=True
        )
        self._thread.start()

    def _pump(self, read_fd: int) -> None:
        with os.fdopen(read_fd, "rb") as pipe:
            for raw in pipe:
                line = raw.decode("utf-8", "replace")
                self._lines.append(line.rstrip())
                with contextlib.suppress(Exception):  # a closed or swapped sys.stderr
                    self._target.write(line)
                    self._target.flush()

    def release(self) -> None:
        """Close our copy of the pipe's write end (the server process holds its own)."""
        if not self.file.closed:
            self.file.close()

    def tail(self, wait: float = 1.0) -> str:
        """The last lines the server wrote; waits briefly for a process that just exited."""
        self.release()
        self._thread.join(wait)
        lines = [line for line in self._lines if line.strip()]
        return "\n".join(lines[-5:])


class ServerConnection:
    """The session to one server, opened when first needed and reopened once when it drops."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self._client: mcp.Client | None = None
        self._holder: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._closed = False

    # -- opening and closing ------------------------------------------------------

    async def session(self) -> tuple[mcp.Client, asyncio.Task[None]]:
        """The live session (opening it if there is none) and the task that holds it."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._closed:
                raise MCPError(
                    f"MCPClient was closed; MCP server '{self.config.name}' cannot be used "
                    "any more (make a new MCPClient)",
                    server=self.config.name,
                )
            if self._client is None or self._holder is None or self._holder.done():
                await self._open()
            assert self._client is not None and self._holder is not None
            return self._client, self._holder

    async def _open(self) -> None:
        config = self.config
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[mcp.Client] = loop.create_future()
        closing = asyncio.Event()
        tail = _StderrTail(sys.stderr) if config.transport == "stdio" else None
        holder = asyncio.create_task(
            self._hold(ready, closing, tail), name=f"flowgraph-mcp-{config.name}"
        )
        try:
            starting: set[asyncio.Future[Any]] = {ready, holder}
            await asyncio.wait(
                starting, timeout=config.connect_timeout, return_when=asyncio.FIRST_COMPLETED
            )
        except BaseException:  # cancelled while starting: do not leave a server behind
            closing.set()
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)
            raise
        if ready.done():
            self._client, self._holder, self._closing = ready.result(), holder, closing
            return
        if not holder.done():
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)
            raise self._startup_error(None, tail)
        exc = None if holder.cancelled() else holder.exception()
        raise self._startup_error(exc, tail) from exc

    def _startup_error(self, exc: BaseException | None, tail: _StderrTail | None) -> MCPError:
        """Why the server could not be used: named, with what to check, and its stderr."""
        config = self.config
        leaf = _leaf(exc) if exc is not None else None
        detail = _describe(leaf) if leaf is not None else "no reason given"
        if leaf is None:
            message = (
                f"MCP server '{config.name}' ({config.describe()}) did not complete the MCP "
                f"handshake within {config.connect_timeout:g} s; check that it is an MCP "
                "server for this transport, or raise 'connect_timeout'"
            )
        elif config.transport == "stdio" and isinstance(leaf, FileNotFoundError):
            message = (
                f"MCP server '{config.name}' could not be started: command "
                f"{config.command!r} was not found; check 'command' in its connection "
                "(a full path, or a program on PATH)"
            )
        elif config.transport == "stdio" and isinstance(leaf, PermissionError):
            message = (
                f"MCP server '{config.name}' could not be started: {config.command!r} is not "
                "executable"
            )
        elif config.transport == "stdio":
            message = (
                f"MCP server '{config.name}' ({config.describe()}) stopped before the MCP "
                f"handshake completed ({detail})"
            )
        elif isinstance(leaf, (OSError, httpx2.TransportError)):
            message = (
                f"MCP server '{config.name}' at {config.url} could not be reached ({detail}); "
                "check that it is running and the url"
            )
        else:
            message = (
                f"MCP server '{config.name}' at {config.url} failed the MCP handshake "
                f"({detail}); check the url (the MCP endpoint, often ending in /mcp) and "
                "the headers it needs"
            )
        stderr = tail.tail() if tail is not None else ""
        if stderr:
            message += f"; its last output on stderr:\n{stderr}"
        return MCPConnectionError(message, server=config.name)

    async def _hold(
        self,
        ready: asyncio.Future[mcp.Client],
        closing: asyncio.Event,
        tail: _StderrTail | None,
    ) -> None:
        """Open the session, hand it over, and keep it open until the client closes."""
        config = self.config
        try:
            async with AsyncExitStack() as stack:
                if config.transport == "stdio":
                    assert tail is not None
                    params = StdioServerParameters(
                        command=config.command,
                        args=list(config.args),
                        env=config.env,
                        cwd=config.cwd,
                        encoding=config.encoding,
                    )
                    transport: Any = stdio_client(params, errlog=tail.file)
                else:
                    http = create_mcp_http_client(headers=config.headers, auth=config.auth)
                    await stack.enter_async_context(http)
                    transport = streamable_http_client(config.url, http_client=http)
                client = mcp.Client(transport, client_info=_CLIENT_INFO)
                try:
                    await stack.enter_async_context(client)
                finally:
                    if tail is not None:
                        tail.release()  # the server process has its own copy now
                ready.set_result(client)
                await closing.wait()
        except asyncio.CancelledError:
            raise  # closed or discarded by us
        except BaseException as exc:
            if not ready.done():
                raise  # _open reports it
            if closing.is_set():  # an error while shutting down: nobody to report it to
                logger.debug("closing MCP server %r: %s", config.name, _describe(exc))
            else:  # the calls racing this task see it end and reconnect
                logger.warning(
                    "MCP server %r: the connection ended (%s)", config.name, _describe(exc)
                )

    async def _discard(self, holder: asyncio.Task[None]) -> None:
        """Forget a session that failed, if it is still the current one, and close it."""
        if self._holder is not holder:
            return
        closing = self._closing
        self._client = self._holder = self._closing = None
        if closing is not None:
            closing.set()
        if not holder.done():
            holder.cancel()
        await asyncio.gather(holder, return_exceptions=True)

    async def aclose(self) -> None:
        """Close the session (stopping a stdio server); the connection is not usable after."""
        self._closed = True
        holder, closing = self._holder, self._closing
        self._client = self._holder = self._closing = None
        if holder is None:
            return
        if closing is not None:
            closing.set()
        try:
            await asyncio.wait_for(asyncio.shield(holder), timeout=10.0)
        except TimeoutError:
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)

    # -- requests -----------------------------------------------------------------

    async def request(
        self, what: str, tool: str | None, send: Callable[[mcp.Client], Awaitable[T]]
    ) -> T:
        """`send(client)` on the live session; on a dropped connection, once more on a new one.

        `what` names the request in messages ("tool 'add'", "the tool list").
        """
        config = self.config
        first: BaseException | None = None
        for attempt in range(2):
            try:
                client, holder = await self.session()
            except MCPError as exc:
                if first is None:
                    raise
                raise MCPConnectionError(
                    f"MCP server '{config.name}' dropped the connection during {what} "
                    f"({_describe(first)}) and could not be reconnected: {exc}",
                    server=config.name,
                    tool_name=tool,
                ) from exc
            try:
                return await self._race(send(client), holder)
            except _Dropped as dropped:
                cause = dropped.__cause__ or dropped
                await self._discard(holder)
                if attempt:
                    raise MCPConnectionError(
                        f"MCP server '{config.name}' dropped the connection during {what}, and "
                        f"again after reconnecting once ({_describe(cause)}); check that the "
                        "server is running",
                        server=config.name,
                        tool_name=tool,
                    ) from cause
                first = cause
                logger.warning(
                    "MCP server %r: connection lost during %s (%s); reconnecting once",
                    config.name,
                    what,
                    _describe(cause),
                )
        raise AssertionError("unreachable")  # pragma: no cover

    async def _race(self, request: Awaitable[T], holder: asyncio.Task[None]) -> T:
        """The request's result, or _Dropped if the session's holder ends first."""
        task = asyncio.ensure_future(request)
        try:
            await asyncio.wait({task, holder}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if task.cancelled():
            raise _Dropped("the session ended")
        exc = task.exception()
        if exc is None:
            return task.result()
        if _is_dropped(exc):
            raise _Dropped(str(exc)) from _leaf(exc)
        raise exc

    def translate(self, exc: BaseException, what: str, tool: str | None) -> MCPError:
        """An SDK error as ours, naming the server and the request."""
        config = self.config
        leaf = _leaf(exc)
        if isinstance(leaf, mcp.MCPError) and leaf.code == REQUEST_TIMEOUT:
            return MCPTimeoutError(
                f"MCP server '{config.name}' did not answer {what} within "
                f"{config.timeout or 0:g} s (the server was asked to cancel it); raise the "
                "connection's 'timeout' if the tool is slow",
                server=config.name,
                tool_name=tool,
            )
        if isinstance(leaf, mcp.MCPError):
            return MCPError(
                f"MCP server '{config.name}' refused {what}: {leaf.message} (code {leaf.code})",
                server=config.name,
                tool_name=tool,
            )
        return MCPError(
            f"MCP server '{config.name}' failed on {what}: {_describe(leaf)}",
            server=config.name,
            tool_name=tool,
        )
