"""Messages as `repr()` and `print()` show them: the fields LangChain's messages show.

`print(message)` and a message inside a printed state (`print(chunk)` of a
stream) read as LangChain's do, so a tutorial's output reads the same:

    HumanMessage(content='hi', additional_kwargs={}, response_metadata={}, id='h1')
    AIMessage(content='Hi.', additional_kwargs={}, response_metadata={}, id='a1',
              tool_calls=[], invalid_tool_calls=[])
    ToolMessage(content='3', name='add', tool_call_id='c1')

`str(message)` is the same fields without the class name, separated by spaces.
The fields LangChain always shows (`additional_kwargs`, the response metadata,
an AI message's call lists) are shown even where flowgraph keeps no such field;
optional ones (`name`, `id`, a tool result's `artifact`, `status="error"`) only
when set. `usage` shows as LangChain's `usage_metadata` dict, content parts as
LangChain's content block dicts, tool calls as LangChain's `ToolCall` dicts.
flowgraph's own `metadata` comes last, when it is not empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["block", "call_dict", "message_repr_args", "usage_dict"]

_EMPTY: dict[str, Any] = {}


def message_repr_args(message: Any) -> Iterator[tuple[str, Any]]:
    """The (field, value) pairs `repr(message)` shows, in LangChain's order.

    `message` is any flowgraph message or `AIMessageChunk` (read by its `type`).
    """
    kind = message.type
    yield "content", _content(message.content)
    if kind != "tool":
        yield "additional_kwargs", {}
        yield "response_metadata", dict(getattr(message, "response_metadata", _EMPTY))
    if message.name is not None:
        yield "name", message.name
    if message.id is not None:
        yield "id", message.id
    if kind == "tool":
        yield "tool_call_id", message.tool_call_id
        if message.artifact is not None:
            yield "artifact", message.artifact
        if message.status != "success":
            yield "status", message.status
    elif kind in ("ai", "ai_chunk"):
        yield "tool_calls", [call_dict(call) for call in message.tool_calls]
        invalid = getattr(message, "invalid_tool_calls", ())
        yield "invalid_tool_calls", [_invalid_dict(call) for call in invalid]
        if message.usage is not None:
            yield "usage_metadata", usage_dict(message.usage)
        if kind == "ai_chunk":
            yield "tool_call_chunks", [_chunk_dict(part) for part in message.tool_call_chunks]
    if kind != "remove" and message.metadata:
        yield "metadata", message.metadata


def call_dict(call: Any) -> dict[str, Any]:
    """A tool call as LangChain's `ToolCall` dict: name, args, id, type."""
    return {"name": call.name, "args": call.args, "id": call.id, "type": "tool_call"}


def usage_dict(usage: Any) -> dict[str, Any]:
    """`Usage` as LangChain's `usage_metadata`: the three counts, then the details reported."""
    shown: dict[str, Any] = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
    }
    if usage.cached_tokens is not None:
        shown["input_token_details"] = {"cache_read": usage.cached_tokens}
    if usage.reasoning_tokens is not None:
        shown["output_token_details"] = {"reasoning": usage.reasoning_tokens}
    return shown


def block(part: Any) -> dict[str, Any]:
    """A content part as LangChain's content block dict (type first, unset fields left out)."""
    kind = part.type
    if kind == "text":
        return {"type": "text", "text": part.text}
    if kind == "reasoning":
        shown: dict[str, Any] = {"type": "reasoning", "reasoning": part.text}
        if part.signature is not None:
            shown["signature"] = part.signature
        return shown
    if kind == "tool_call":
        return {"type": "tool_call", "id": part.id, "name": part.name, "args": part.args}
    if kind == "tool_call_chunk":
        return _chunk_dict(part)
    dumped: dict[str, Any] = part.model_dump(exclude_none=True)
    return {"type": kind, **dumped}


def _content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    return [block(part) for part in content]


def _invalid_dict(call: Any) -> dict[str, Any]:
    return {
        "type": "invalid_tool_call",
        "id": call.id,
        "name": call.name,
        "args": call.args,
        "error": call.error,
    }


def _chunk_dict(part: Any) -> dict[str, Any]:
    return {
        "name": part.name,
        "args": part.args,
        "id": part.id,
        "index": part.index,
        "type": "tool_call_chunk",
    }
