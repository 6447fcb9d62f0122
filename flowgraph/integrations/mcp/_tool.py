"""An MCP server's tool as a flowgraph `Tool`, and its results as `ToolMessage`s.

The server describes the tool: its name, description and input schema are
used as given (`json_schema` is the server's `inputSchema`). Arguments are
passed through unvalidated, apart from being a JSON object: the server is
the authority on its own schema and checks every call, and its refusal comes
back as an `isError` result, which the model reads like any failed call.
(Checking a copy of the schema here could only add disagreements, such as
refusing "3" for an integer that the server would have accepted.)

A call returns a `ToolMessage`, which `ToolNode` keeps (setting the call id):
text blocks become its text; images `ImagePart`s; audio `AudioPart`s;
embedded resources their text, or a `FilePart` (an `ImagePart` for an
image) for binary ones; resource links a line naming the link. Structured
content is kept as the message's `artifact` (and is the text when the server
sent no content blocks). `isError` makes it `status="error"` with the
server's text.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import functools
import json
import re
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from contextlib import suppress
from typing import Any, Protocol, TypeVar

import mcp_types
from pydantic import BaseModel, ConfigDict, create_model

from flowgraph._context import emit, listening
from flowgraph.errors import MCPError
from flowgraph.messages import AudioPart, ContentPart, FilePart, ImagePart, TextPart, ToolMessage
from flowgraph.messages import ToolCall as _ToolCall
from flowgraph.tools import Tool

__all__ = ["MCPTool", "ProgressReporter", "ToolCaller", "tool_message"]

T = TypeVar("T")

_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")

ProgressReporter = Callable[[float, float | None, str | None], None]
"""Called (from any thread) with each progress notification of a call: progress, total, message."""


class ToolCaller(Protocol):
    """What an MCPTool calls through: its client, which owns the sessions and their loop."""

    async def acall_tool(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        on_progress: ProgressReporter | None,
    ) -> mcp_types.CallToolResult: ...

    def run_sync(self, coro: Coroutine[Any, Any, T]) -> T: ...


def provider_name(name: str) -> str:
    """An MCP tool name as model providers accept it: 1-64 of letters, digits, '_', '-'."""
    cleaned = _INVALID_NAME_CHARS.sub("_", name)[:64]
    return cleaned or "tool"


def _args_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A pydantic model that accepts any object and describes itself with `schema`."""

    def describe(out: dict[str, Any]) -> None:
        out.clear()
        out.update(copy.deepcopy(schema))

    config = ConfigDict(extra="allow", json_schema_extra=describe)
    model: type[BaseModel] = create_model(f"{name}_args", __config__=config)
    return model


class MCPTool(Tool):
    """A tool of an MCP server, called through the `MCPClient` that listed it.

    `name` is what the model sees (the server's name, made provider-safe and
    prefixed with the server's name when the client was asked to);
    `remote_name` is what the server is called with. `invoke` / `ainvoke`
    return a `ToolMessage` (see the module docstring for how content maps).
    """

    server: str
    """The name of the server in the client's connections."""
    remote_name: str
    """The tool's name on the server."""
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any]
    """The server's hints (readOnlyHint, destructiveHint, ...), possibly empty."""

    def __init__(
        self, spec: mcp_types.Tool, *, server: str, caller: ToolCaller, name: str | None = None
    ) -> None:
        self.server = server
        self.remote_name = spec.name
        self.input_schema = dict(spec.input_schema)
        self.output_schema = dict(spec.output_schema) if spec.output_schema else None
        self.annotations = (
            spec.annotations.model_dump(by_alias=True, exclude_none=True)
            if spec.annotations
            else {}
        )
        self._caller = caller
        tool_name = name or provider_name(spec.name)
        description = (spec.description or "").strip() or (spec.title or "").strip()
        if not description:
            description = f"The tool '{spec.name}' of the MCP server '{server}'."

        async def call(**arguments: Any) -> ToolMessage:
            return await self.arun_validated(arguments)

        call.__name__ = tool_name
        super().__init__(
            call,
            name=tool_name,
            description=description,
            args_schema=_args_model(tool_name, self.input_schema),
            parse_docstring=False,
        )

    @functools.cached_property
    def json_schema(self) -> dict[str, Any]:
        """The server's `inputSchema`, as it sent it."""
        return copy.deepcopy(self.input_schema)

    def __repr__(self) -> str:
        return f"MCPTool(name={self.name!r}, server={self.server!r})"

    def parse_args(self, args: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
        """The arguments as sent: any JSON object (the server validates them)."""
        if isinstance(args, _ToolCall):
            args = args.args
        return self._named_arguments(args)

    def run_validated(
        self,
        kwargs: dict[str, Any],
        *,
        state: Any = None,
        tool_call_id: str | None = None,
        store: Any = None,
    ) -> ToolMessage:
        """Call the server from sync code: `arun_validated`, run on the client's loop."""
        return self._caller.run_sync(self.arun_validated(kwargs, tool_call_id=tool_call_id))

    async def arun_validated(
        self,
        kwargs: dict[str, Any],
        *,
        state: Any = None,
        tool_call_id: str | None = None,
        store: Any = None,
        offload: Callable[[Callable[[], Any]], Awaitable[Any]] | None = None,
    ) -> ToolMessage:
        """Call the server; the session is shared by every call of the client.

        `offload` is not used: the call is async, there is no sync function to run.
        """
        reporter = self._progress_reporter(tool_call_id)
        try:
            result = await self._caller.acall_tool(self.server, self.remote_name, kwargs, reporter)
        except MCPError as exc:
            exc.tool_call_id = tool_call_id
            raise
        return tool_message(result, server=self.server, tool=self, tool_call_id=tool_call_id)

    def _progress_reporter(self, tool_call_id: str | None) -> ProgressReporter | None:
        """Passes the server's progress to the run's "events" stream, if anyone listens.

        Notifications arrive on the client's loop thread; each is handed to the
        caller's loop and emitted there in the caller's context, where `emit`
        finds the running step.
        """
        if not listening("events"):
            return None
        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        base = {"event": "progress", "server": self.server, "tool": self.name}
        if tool_call_id is not None:
            base["tool_call_id"] = tool_call_id

        def report(progress: float, total: float | None, message: str | None) -> None:
            data = {**base, "progress": progress, "total": total, "message": message}
            with suppress(RuntimeError):  # the caller's loop has closed: nobody listens now
                loop.call_soon_threadsafe(emit, "events", data, context=context)

        return report


def _resource_part(
    resource: mcp_types.TextResourceContents | mcp_types.BlobResourceContents,
) -> Any:
    if isinstance(resource, mcp_types.TextResourceContents):
        return TextPart(text=resource.text)
    mime = resource.mime_type or "application/octet-stream"
    if mime.startswith("image/"):
        return ImagePart(data=resource.blob, mime_type=mime)
    if mime.startswith("audio/"):
        return AudioPart(data=resource.blob, mime_type=mime)
    filename = resource.uri.rstrip("/").rsplit("/", 1)[-1] or None
    return FilePart(data=resource.blob, mime_type=mime, filename=filename)


def _part(block: Any) -> Any:
    if isinstance(block, mcp_types.TextContent):
        return TextPart(text=block.text)
    if isinstance(block, mcp_types.ImageContent):
        return ImagePart(data=block.data, mime_type=block.mime_type)
    if isinstance(block, mcp_types.AudioContent):
        return AudioPart(data=block.data, mime_type=block.mime_type)
    if isinstance(block, mcp_types.EmbeddedResource):
        return _resource_part(block.resource)
    if isinstance(block, mcp_types.ResourceLink):
        about = f" ({block.description})" if block.description else ""
        return TextPart(text=f"Resource {block.name}{about}: {block.uri}")
    dumped = block.model_dump(by_alias=True, exclude_none=True, mode="json")
    return TextPart(text=json.dumps(dumped, ensure_ascii=False))


def tool_message(
    result: mcp_types.CallToolResult,
    *,
    server: str,
    tool: MCPTool,
    tool_call_id: str | None,
) -> ToolMessage:
    """A `tools/call` result as the ToolMessage the model reads (see the module docstring)."""
    parts: list[ContentPart] = [_part(block) for block in result.content]
    content: str | list[ContentPart]
    if all(isinstance(part, TextPart) for part in parts):
        content = "\n".join(part.text for part in parts if isinstance(part, TextPart))
        if not parts and result.structured_content is not None:
            content = json.dumps(result.structured_content, ensure_ascii=False)
    else:
        content = parts
    if result.is_error and not content:
        content = f"MCP tool '{tool.remote_name}' of server '{server}' failed (it gave no reason)"
    return ToolMessage(
        content=content,
        tool_call_id=tool_call_id or "",
        name=tool.name,
        status="error" if result.is_error else "success",
        artifact=result.structured_content,
        metadata={"mcp_server": server, "mcp_tool": tool.remote_name},
    )
