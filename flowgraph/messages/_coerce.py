"""Building messages from what callers write: dicts, (role, content) tuples, strings.

Role names of both worlds are accepted (OpenAI's user/assistant and
LangChain's human/ai), so a transcript from either converts without a
mapping table on the caller's side. A role dict (or tuple content) in
OpenAI's own shapes -- `tool_calls` with `function`, `image_url` /
`input_audio` / `file` parts, `reasoning_content`, `refusal`, `content:
None` -- goes through `from_openai`; every other dict is validated directly,
which is the fast path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from flowgraph.errors import InvalidMessageError
from flowgraph.messages._messages import (
    MESSAGE_TYPES,
    AnyMessage,
    BaseMessage,
    RemoveMessage,
    message_list_adapter,
)
from flowgraph.messages._validate import _ROLE_HINT, type_for_role, validate_message_dict

__all__ = [
    "MessageLike",
    "coerce_message",
    "coerce_messages",
    "messages_from_dicts",
    "messages_to_dicts",
]

MessageLike = BaseMessage | RemoveMessage | Mapping[str, Any] | tuple[str, Any] | str
"""Anything `add_messages` and graph inputs accept in place of a message."""

_OPENAI_KEYS = frozenset(
    {"reasoning_content", "reasoning", "refusal", "annotations", "audio", "function_call"}
)
"""Keys only an OpenAI-format message has; flowgraph's own dicts never carry them."""
_OPENAI_PART_TYPES = frozenset({"image_url", "input_audio", "audio_url", "video_url", "refusal"})


def _has_openai_parts(content: object) -> bool:
    return isinstance(content, list) and any(
        isinstance(part, Mapping)
        and (
            part.get("type") in _OPENAI_PART_TYPES
            or (part.get("type") == "file" and "file" in part)
        )
        for part in content
    )


def _is_openai_shaped(value: Mapping[str, Any]) -> bool:
    """True for a role dict only `from_openai` understands."""
    if not _OPENAI_KEYS.isdisjoint(value):
        return True
    calls = value.get("tool_calls")
    if isinstance(calls, list) and any(isinstance(c, Mapping) and "function" in c for c in calls):
        return True
    content = value.get("content", "")
    return content is None or _has_openai_parts(content)


def _from_openai(value: Mapping[str, Any]) -> AnyMessage:
    # Imported on first use: most inputs are flowgraph's own dicts and never need it.
    from flowgraph.messages._from_openai import from_openai

    return from_openai(value)


def coerce_message(value: object) -> AnyMessage:
    """One message from a message, a dict, a (role, content) tuple or a string.

    A bare string is what a person said. Dicts may use `type` or `role`. A streamed
    `AIMessageChunk` (chunks a node added up itself) is the AIMessage it describes.
    """
    if isinstance(value, (BaseMessage, RemoveMessage)):
        return value  # type: ignore[return-value]  # every concrete message is in AnyMessage
    if isinstance(value, str):
        return MESSAGE_TYPES["human"](content=value)  # type: ignore[return-value]
    if isinstance(value, tuple):
        if len(value) != 2:
            raise InvalidMessageError(
                f"A message tuple is (role, content); got {len(value)} items: {value!r}"
            )
        role, content = value
        if _has_openai_parts(content):
            return _from_openai({"role": role, "content": content})
        return validate_message_dict({"type": type_for_role(role), "content": content})
    if isinstance(value, Mapping):
        if "type" in value and value["type"] in MESSAGE_TYPES:
            return validate_message_dict(value)
        if "role" in value:
            if _is_openai_shaped(value):
                return _from_openai(value)
            data = {k: v for k, v in value.items() if k != "role"}
            data["type"] = type_for_role(value["role"])
            return validate_message_dict(data)
        raise InvalidMessageError(
            f"A message dict needs a 'role' ({_ROLE_HINT}) or a 'type'; got keys {sorted(value)}"
        )
    if isinstance(value, BaseModel):
        from flowgraph.messages._chunks import AIMessageChunk  # only a model's stream gets here

        if isinstance(value, AIMessageChunk):  # chunks merged in a node, as LangGraph takes them
            return value.to_message()
        raise InvalidMessageError(f"{type(value).__name__} is not a message type")
    raise InvalidMessageError(
        f"Cannot make a message from {type(value).__name__}; "
        "pass a message, a dict, a (role, content) tuple or a string"
    )


def coerce_messages(values: object) -> list[AnyMessage]:
    """A list of messages from one message-like value or an iterable of them."""
    if isinstance(values, (str, tuple, Mapping, BaseModel)):  # a model is one value
        return [coerce_message(values)]
    if not isinstance(values, Iterable):
        raise InvalidMessageError(
            f"Expected a message or a list of messages, not {type(values).__name__}"
        )
    return [coerce_message(v) for v in values]


def messages_to_dicts(messages: Sequence[BaseMessage | RemoveMessage]) -> list[dict[str, Any]]:
    """Plain dicts that `messages_from_dicts` turns back into equal messages."""
    return [m.model_dump() for m in messages]


def messages_from_dicts(dicts: Iterable[Mapping[str, Any]]) -> list[AnyMessage]:
    """The inverse of `messages_to_dicts`."""
    items = list(dicts)
    try:
        return message_list_adapter.validate_python(items)
    except ValidationError:
        return [coerce_message(d) for d in items]  # re-validate one by one for a precise error
