"""MCPClient: the tools of MCP servers as flowgraph `Tool`s.

    async with MCPClient({
        "files": {"transport": "stdio", "command": "python", "args": ["files_server.py"]},
        "search": {"transport": "streamable_http", "url": "http://127.0.0.1:8000/mcp",
                   "headers": {"Authorization": "Bearer ..."}},
    }) as client:
        tools = await client.get_tools()
        app = create_react_agent(model, tools)

Sessions live on an event loop the client owns (a daemon thread, see
`_portal`), so the same tools work from an async run, from a sync `invoke`
(whose loop changes from call to call), and from several runs at once.
Each server's session opens on first use, is shared by every later call,
is reopened once if the connection drops, and closes with the client.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Coroutine, Iterable, Mapping
from types import TracebackType
from typing import Any, Literal, NotRequired, Required, TypedDict, TypeVar

import mcp
import mcp_types

from flowgraph.errors import MCPError
from flowgraph.integrations.mcp._connection import ServerConnection, parse_config
from flowgraph.integrations.mcp._portal import Portal
from flowgraph.integrations.mcp._tool import MCPTool, ProgressReporter, provider_name

__all__ = ["Connection", "MCPClient", "StdioConnection", "StreamableHttpConnection"]

T = TypeVar("T")

_LIST_PAGES = 100
"""At most this many pages of tools/list per server: a paginator that never ends cannot hang."""


class StdioConnection(TypedDict, total=False):
    """A server the client starts as a subprocess and talks to over its stdin/stdout."""

    transport: Required[Literal["stdio"]]
    command: Required[str]
    args: list[str]
    env: dict[str, str] | None
    """Extra environment variables, over the SDK's safe defaults (HOME, PATH, ...)."""
    cwd: str | None
    encoding: str
    timeout: float | None
    """Seconds a tool call may take (default: the client's `timeout`)."""
    connect_timeout: float
    """Seconds to start and complete the handshake (default: the client's)."""


class StreamableHttpConnection(TypedDict, total=False):
    """A running server reached over MCP's streamable HTTP transport."""

    transport: Required[Literal["streamable_http", "http"]]
    url: Required[str]
    headers: dict[str, str] | None
    """Sent with every request, e.g. {"Authorization": "Bearer ..."}."""
    auth: NotRequired[Any]
    """An `httpx2.Auth` (the SDK's OAuth providers are ones) for servers that need OAuth."""
    timeout: float | None
    connect_timeout: float


Connection = StdioConnection | StreamableHttpConnection


class MCPClient:
    """Connections to named MCP servers, whose tools `get_tools` returns as flowgraph Tools.

    `connections` maps a server name (used in tool names with
    `tool_name_prefix=True`, and in every error message) to its connection,
    spelled as langchain-mcp-adapters spells it: `{"transport": "stdio",
    "command", "args", "env", "cwd"}` or `{"transport": "streamable_http"
    (also "http"), "url", "headers"}`. Either may add `timeout` (seconds a
    tool call may take; default the client's `timeout`, None: no limit) and
    `connect_timeout` (seconds to start the server and shake hands).

    Close it with `async with`, `await client.aclose()`, `with`, or
    `client.close()`: this ends the sessions and stops stdio servers. Its
    tools fail with `MCPError` after that.
    """

    def __init__(
        self,
        connections: Mapping[str, Connection | Mapping[str, Any]],
        *,
        timeout: float | None = None,
        connect_timeout: float = 30.0,
        tool_name_prefix: bool = False,
    ) -> None:
        if not isinstance(connections, Mapping) or not connections:
            raise ValueError(
                "MCPClient needs at least one server: MCPClient({'name': {'transport': "
                "'stdio', 'command': 'python', 'args': ['server.py']}})"
            )
        self._servers = {
            name: ServerConnection(
                parse_config(name, config, timeout=timeout, connect_timeout=connect_timeout)
            )
            for name, config in connections.items()
        }
        self.tool_name_prefix = tool_name_prefix
        self._portal: Portal | None = None
        self._portal_lock = threading.Lock()
        self._closed = False

    @property
    def servers(self) -> list[str]:
        """The server names, in the order they were given."""
        return list(self._servers)

    def __repr__(self) -> str:
        return f"MCPClient(servers={self.servers!r})"

    # -- the loop the sessions live on ----------------------------------------------

    def _loop(self) -> Portal:
        with self._portal_lock:  # two threads' first calls must share one loop
            if self._closed:
                raise MCPError(
                    "MCPClient was closed; its tools cannot be called any more (make a new "
                    "MCPClient)",
                    server=", ".join(self._servers),
                )
            if self._portal is None:
                self._portal = Portal("flowgraph-mcp-client")
                # a client the program never closed still stops its servers politely
                atexit.register(self.close)
            return self._portal

    def _server(self, name: str) -> ServerConnection:
        try:
            return self._servers[name]
        except KeyError:
            known = ", ".join(repr(n) for n in self._servers)
            raise ValueError(
                f"There is no MCP server {name!r} in this client; it has {known}"
            ) from None

    # -- tools ------------------------------------------------------------------------

    async def get_tools(self, server: str | None = None) -> list[MCPTool]:
        """The tools of one server, or of every server (in connection order).

        Connects the servers that are not connected yet. Tool names must be
        unique across the servers asked; `tool_name_prefix=True` makes them
        so (`files_read`, `search_read`).
        """
        names = [server] if server is not None else list(self._servers)
        for name in names:
            self._server(name)
        listed = await self._loop().run(self._list_all(names))
        tools: list[MCPTool] = []
        owners: dict[str, str] = {}
        for name, specs in zip(names, listed, strict=True):
            for spec in specs:
                tool_name = provider_name(
                    f"{name}_{spec.name}" if self.tool_name_prefix else spec.name
                )
                if tool_name in owners:
                    raise ValueError(
                        f"MCP servers '{owners[tool_name]}' and '{name}' both have a tool "
                        f"named '{tool_name}'; pass MCPClient(..., tool_name_prefix=True) to "
                        "prefix each tool with its server's name"
                        if owners[tool_name] != name
                        else f"MCP server '{name}' has two tools named '{tool_name}' once "
                        "made safe for model providers (letters, digits, '_' and '-')"
                    )
                owners[tool_name] = name
                tools.append(MCPTool(spec, server=name, caller=self, name=tool_name))
        return tools

    def get_tools_sync(self, server: str | None = None) -> list[MCPTool]:
        """`get_tools` for sync code, e.g. to build an app at module level for the CLI."""
        return self.run_sync(self.get_tools(server))

    async def _list_all(self, names: Iterable[str]) -> list[list[mcp_types.Tool]]:
        return list(await asyncio.gather(*(self._list(name) for name in names)))

    async def _list(self, name: str) -> list[mcp_types.Tool]:
        connection = self._servers[name]
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(_LIST_PAGES):

            async def send(client: mcp.Client, cursor: str | None = cursor) -> Any:
                return await client.list_tools(cursor=cursor)

            try:
                page = await connection.request("the tool list", None, send)
            except MCPError:
                raise
            except Exception as exc:
                raise connection.translate(exc, "the tool list", None) from exc
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def acall_tool(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        on_progress: ProgressReporter | None = None,
    ) -> mcp_types.CallToolResult:
        """Call `tool` on `server` with `arguments`: the raw MCP result (MCPTool maps it)."""
        return await self._loop().run(self._call(server, tool, arguments, on_progress))

    def run_sync(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the client's loop, blocking this thread: the bridge for sync code."""
        try:
            portal = self._loop()
        except BaseException:
            coro.close()
            raise
        return portal.run_sync(coro)

    async def _call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        on_progress: ProgressReporter | None,
    ) -> mcp_types.CallToolResult:
        connection = self._server(server)
        what = f"tool '{tool}'"
        callback = None
        if on_progress is not None:
            report = on_progress

            async def callback(progress: float, total: float | None, message: str | None) -> None:
                report(progress, total, message)

        async def send(client: mcp.Client) -> mcp_types.CallToolResult:
            return await client.call_tool(
                tool,
                arguments,
                read_timeout_seconds=connection.config.timeout,
                progress_callback=callback,
            )

        try:
            return await connection.request(what, tool, send)
        except MCPError:
            raise
        except Exception as exc:
            raise connection.translate(exc, what, tool) from exc

    # -- closing ----------------------------------------------------------------------

    async def _close_all(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self._servers.values()))

    def _detach(self) -> Portal | None:
        """Mark the client closed; the loop to close the sessions on, if one was started."""
        with self._portal_lock:
            if self._closed:
                return None
            self._closed = True
            portal, self._portal = self._portal, None
        if portal is not None:
            atexit.unregister(self.close)
        return portal

    async def aclose(self) -> None:
        """Close every session (stdio servers exit) and stop the client's loop."""
        portal = self._detach()
        if portal is not None:
            try:
                await portal.run(self._close_all())
            finally:
                await asyncio.to_thread(portal.stop)

    def close(self) -> None:
        """`aclose` for sync code."""
        portal = self._detach()
        if portal is not None:
            try:
                portal.run_sync(self._close_all())
            finally:
                portal.stop()

    async def __aenter__(self) -> MCPClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __enter__(self) -> MCPClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
