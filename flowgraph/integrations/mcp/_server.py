"""flowgraph apps as the tools of an MCP server, so an MCP host can talk to an agent.

    server = create_mcp_server({"weather": app})   # app has a checkpointer
    await run_mcp_server(server)                    # stdio; or port=8000 for HTTP

Each app is one tool taking `message` (what the user says) and an optional
`thread_id`. Without a thread id the call starts a new conversation; the
answer's structured content carries the thread id, and passing it back
continues that conversation from the app's checkpoints. The answer's text
is the agent's last reply. A run that pauses on `interrupt()` answers with
what the graph asks and how to resume: call again on the same thread with
the answer as the message. Every finished step is reported as MCP progress
(to hosts that ask for progress).

Built on the SDK's MCPServer: it does the protocol, the transports and the
validation of the arguments.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import Field
from pydantic_core import to_jsonable_python
from typing_extensions import TypedDict  # pydantic needs it before Python 3.12

from flowgraph.errors import ConcurrentRunError
from flowgraph.graph import Command, CompiledGraph, StateSnapshot
from flowgraph.messages import AIMessage, BaseMessage, HumanMessage

__all__ = ["AgentReply", "create_mcp_server", "run_mcp_server"]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
INSTRUCTIONS = (
    "Each tool is a flowgraph agent. Send the user's message; the answer carries a "
    "thread_id: pass it back to continue the same conversation."
)


class PendingQuestion(TypedDict):
    """An `interrupt()` the thread waits on: its id and what it asks."""

    id: str
    node: str
    value: Any


class AgentReply(TypedDict):
    """The structured content of every answer (the tool's outputSchema)."""

    thread_id: str
    """Pass it back as `thread_id` to continue this conversation."""
    status: Literal["done", "interrupted"]
    """"interrupted": the agent waits for an answer (see `interrupts`)."""
    messages: int
    """How many messages the conversation holds now."""
    interrupts: list[PendingQuestion]


def _message_field(app: CompiledGraph, tool: str) -> str:
    fields = sorted(app.engine.state.message_fields)
    if "messages" in fields:
        return "messages"
    if len(fields) == 1:
        return fields[0]
    raise ValueError(
        f"App for MCP tool '{tool}' keeps no single message list to put the user's message "
        "in; give its state a `messages` field (MessagesState)"
    )


def _messages(snapshot: StateSnapshot, field: str) -> list[BaseMessage]:
    values = snapshot.values
    found = values.get(field) if isinstance(values, dict) else getattr(values, field, None)
    return list(found or [])


def _answer_text(messages: list[BaseMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message.text
    return ""


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(to_jsonable_python(value, fallback=repr), ensure_ascii=False)


class _AppTool:
    """One app served as one MCP tool: turns a call into a run on the asked thread."""

    def __init__(
        self,
        name: str,
        app: CompiledGraph,
        on_new_thread: Callable[[str, str], None] | None,
    ) -> None:
        if app.checkpointer is None:
            raise ValueError(
                f"App for MCP tool '{name}' has no checkpointer, so a thread_id could not "
                "continue its conversation; compile it with checkpointer=... (the CLI binds "
                "its --db store)"
            )
        self.name = name
        self.app = app
        self.field = _message_field(app, name)
        self.on_new_thread = on_new_thread

    async def __call__(self, message: str, thread_id: str | None, ctx: Context) -> CallToolResult:
        thread = thread_id or f"mcp-{uuid.uuid4().hex[:12]}"
        try:
            before = await asyncio.to_thread(self.app.get_state, thread)
            input: Any
            if before.interrupts:
                answers = {item.id: message for item in before.interrupts}
                input = Command(resume=message if len(answers) == 1 else answers)
            else:
                if before.checkpoint_id is None and self.on_new_thread is not None:
                    self.on_new_thread(self.name, thread)
                input = {self.field: [HumanMessage(content=message)]}
            steps = 0
            async for part in self.app.astream(input, thread_id=thread, mode="updates"):
                if part.node and not part.node.startswith("__"):
                    steps += 1
                    await ctx.report_progress(steps, None, f"step {part.step}: {part.node}")
            after = await asyncio.to_thread(self.app.get_state, thread)
        except ConcurrentRunError:
            return _error(
                f"Thread {thread} is busy with another call; send this message again once "
                "that call has answered."
            )
        except Exception as exc:
            return _error(
                f"The agent failed on thread {thread}: {type(exc).__name__}: {exc}. The "
                "conversation is kept up to its last complete step; call again with this "
                "thread_id to retry."
            )
        return self._reply(thread, after)

    def _reply(self, thread: str, snapshot: StateSnapshot) -> CallToolResult:
        messages = _messages(snapshot, self.field)
        questions: list[PendingQuestion] = [
            {"id": i.id, "node": i.node, "value": to_jsonable_python(i.value, fallback=repr)}
            for i in snapshot.interrupts
        ]
        reply: AgentReply = {
            "thread_id": thread,
            "status": "interrupted" if questions else "done",
            "messages": len(messages),
            "interrupts": questions,
        }
        if questions:
            asked = "\n".join(f"- {_describe(q['value'])}" for q in questions)
            text = (
                f"The agent paused and is waiting for an answer:\n{asked}\n"
                f'To answer, call `{self.name}` again with thread_id "{thread}" and the '
                "answer as the message."
            )
        else:
            text = _answer_text(messages) or _describe(
                to_jsonable_python(snapshot.values, fallback=repr)
            )
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=dict(reply)
        )


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _description(name: str, app: CompiledGraph) -> str:
    return (
        f"Talk to the flowgraph agent '{app.name or name}'. Give the user's message; the "
        "answer is the agent's reply. To continue a conversation, pass the thread_id of an "
        "earlier answer; without one a new conversation starts. If the agent paused to ask "
        "something, the answer says so: reply on the same thread_id with the answer as the "
        "message."
    )


def _tool_function(served: _AppTool) -> Callable[..., Any]:
    """The function MCPServer describes (its parameters are the tool's input schema)."""

    async def call(
        message: Annotated[str, Field(description="What the user says to the agent.")],
        ctx: Context,
        thread_id: Annotated[
            str | None,
            Field(
                description="The thread_id of an earlier answer, to continue that "
                "conversation; omit it to start a new one."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, AgentReply]:
        return await served(message, thread_id, ctx)

    return call


def create_mcp_server(
    apps: Mapping[str, CompiledGraph],
    *,
    name: str = "flowgraph",
    on_new_thread: Callable[[str, str], None] | None = None,
) -> MCPServer:
    """An MCP server whose tools are `apps`, one per name (see the module docstring).

    Each app needs a checkpointer: the conversations are its threads.
    `on_new_thread(tool, thread_id)` is called when a call starts a new
    thread (the CLI records which app runs it).
    """
    if not apps:
        raise ValueError("create_mcp_server needs at least one app: {'agent': app}")
    server = MCPServer(name, instructions=INSTRUCTIONS, log_level="WARNING")
    for tool_name, app in apps.items():
        if not _TOOL_NAME.match(tool_name):
            raise ValueError(
                f"MCP tool name {tool_name!r} is not valid; use 1-64 letters, digits, '_', "
                "'-' or '.'"
            )
        served = _AppTool(tool_name, app, on_new_thread)
        server.add_tool(
            _tool_function(served), name=tool_name, description=_description(tool_name, app)
        )
    return server


async def run_mcp_server(
    server: MCPServer, *, port: int | None = None, host: str = "127.0.0.1"
) -> None:
    """Serve over stdio (the default), or over streamable HTTP at http://HOST:PORT/mcp."""
    if port is None:
        await server.run_stdio_async()
    else:
        await server.run_streamable_http_async(host=host, port=port)
