"""A small MCP server for the MCP client tests, built with the SDK's MCPServer.

    python mcp_server_app.py                  # stdio
    python mcp_server_app.py --port 8123      # streamable HTTP on 127.0.0.1:8123/mcp

Each tool exercises one kind of result the client maps to a message.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
from typing import Any, TypedDict

import mcp_types as types
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n% a tiny test document\n"

server = MCPServer("flowgraph-test")


class Forecast(TypedDict):
    city: str
    temperature_c: float
    conditions: str


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(structured_output=False)
def echo(text: str, times: int = 1) -> str:
    """Repeat a text."""
    return " ".join([text] * times)


@server.tool()
def forecast(city: str) -> Forecast:
    """The weather forecast for a city, as structured data."""
    return {"city": city, "temperature_c": 21.5, "conditions": "sunny"}


@server.tool(structured_output=False)
def chart(title: str) -> list[Any]:
    """A chart as a PNG image, with a caption."""
    return [f"Chart: {title}", Image(data=PNG, format="png")]


@server.tool(structured_output=False)
def report(kind: str = "text") -> list[types.ContentBlock]:
    """A report as an embedded resource (kind: text or pdf)."""
    if kind == "pdf":
        blob = types.BlobResourceContents(
            uri="file:///reports/q3.pdf",
            mime_type="application/pdf",
            blob=base64.b64encode(PDF).decode(),
        )
        return [types.EmbeddedResource(type="resource", resource=blob)]
    contents = types.TextResourceContents(
        uri="file:///reports/q3.md", mime_type="text/markdown", text="# Q3\nRevenue up 12%."
    )
    return [types.EmbeddedResource(type="resource", resource=contents)]


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the given reason."""
    raise ToolError(f"cannot do that: {reason}")


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps, then answers."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
async def long_job(steps: int, ctx: Context) -> str:
    """Works through steps, reporting progress after each."""
    for step in range(1, steps + 1):
        await asyncio.sleep(0.01)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"done {steps} steps"


@server.tool()
def crash() -> str:
    """Ends the server process at once, as a crash would."""
    os._exit(1)


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    if args.port is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
