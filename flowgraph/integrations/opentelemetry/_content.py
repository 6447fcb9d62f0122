"""Messages as the GenAI semantic conventions record them (only with capture_content=True).

`gen_ai.input.messages` and `gen_ai.output.messages` follow the
conventions' JSON schemas: a list of `{"role", "parts"}` objects whose parts
are `text`, `reasoning`, `tool_call`, `tool_call_response`, `uri` or `blob`.
Span attributes cannot hold structured values yet, so, as the conventions
say for that case, each is recorded as a JSON string.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic_core import to_jsonable_python

from flowgraph.messages import (
    AIMessage,
    AudioPart,
    BaseMessage,
    FilePart,
    HumanMessage,
    ImagePart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    VideoPart,
)

__all__ = ["as_json", "input_messages", "output_messages"]

_ROLES: dict[type[BaseMessage], str] = {
    SystemMessage: "system",
    HumanMessage: "user",
    AIMessage: "assistant",
    ToolMessage: "tool",
}
_MODALITIES: dict[type[Any], str] = {
    ImagePart: "image",
    AudioPart: "audio",
    VideoPart: "video",
    FilePart: "document",
}


def as_json(value: Any) -> str:
    """`value` as a JSON string (what a span attribute can hold); odd objects as their text."""
    return json.dumps(to_jsonable_python(value, fallback=str), ensure_ascii=False)


def _part(part: Any) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "content": part.text}
    if isinstance(part, ReasoningPart):
        return {"type": "reasoning", "content": part.text}
    if isinstance(part, ToolCallPart):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.args}
    modality = _MODALITIES.get(type(part))
    if modality is not None:
        media: dict[str, Any] = {"modality": modality, "mime_type": part.mime_type}
        if part.url is not None:
            return {"type": "uri", "uri": part.url, **media}
        return {"type": "blob", "content": part.data, **media}
    return {"type": getattr(part, "type", type(part).__name__)}


def _message(message: BaseMessage) -> dict[str, Any]:
    role = _ROLES.get(type(message), getattr(message, "type", "user"))
    content = message.content_blocks if isinstance(message, AIMessage) else message.content
    parts: list[dict[str, Any]]
    if isinstance(message, ToolMessage):
        parts = [{"type": "tool_call_response", "id": message.tool_call_id, "response": content}]
        if isinstance(content, list):
            parts[0]["response"] = [_part(p) for p in content]
    elif isinstance(content, str):
        parts = [{"type": "text", "content": content}] if content else []
    else:
        parts = [_part(p) for p in content]
    found: dict[str, Any] = {"role": role, "parts": parts}
    if message.name:
        found["name"] = message.name
    return found


def input_messages(messages: Sequence[BaseMessage]) -> str:
    """`gen_ai.input.messages`: the chat history sent, in order, system message included."""
    return as_json([_message(m) for m in messages])


def output_messages(message: AIMessage) -> str:
    """`gen_ai.output.messages`: the one reply (choice), with its finish reason."""
    found = _message(message)
    found["finish_reason"] = message.response_metadata.get("finish_reason", "stop")
    return as_json([found])
