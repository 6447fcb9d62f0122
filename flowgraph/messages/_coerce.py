"""Building messages from what callers write: dicts, (role, content) tuples, strings.

Role names of both worlds are accepted (OpenAI's user/assistant and
LangChain's human/ai), so a transcript from either converts without a
mapping table on the caller's side.
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
    message_adapter,
    message_list_adapter,
)

__all__ = [
    "MessageLike",
    "coerce_message",
    "coerce_messages",
    "messages_from_dicts",
    "messages_to_dicts",
]

MessageLike = BaseMessage | RemoveMessage | Mapping[str, Any] | tuple[str, Any] | str
"""Anything `add_messages` and graph inputs accept in place of a message."""

ROLE_TO_TYPE = {
    "human": "human",
    "user": "human",
    "ai": "ai",
    "assistant": "ai",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "remove": "remove",
}
_ROLE_HINT = "user/human, assistant/ai, system/developer, tool"


def _type_for_role(role: object) -> str:
    message_type = ROLE_TO_TYPE.get(role) if isinstance(role, str) else None
    if message_type is None:
        raise InvalidMessageError(f"Unknown message role {role!r}; use one of: {_ROLE_HINT}")
    return message_type


def _validate(data: Mapping[str, Any]) -> AnyMessage:
    try:
        return message_adapter.validate_python(data)
    except ValidationError as exc:
        kind = data.get("type")
        raise InvalidMessageError(
            f"Invalid {kind} message: {_describe(exc)}", message_id=data.get("id")
        ) from exc


def _describe(exc: ValidationError) -> str:
    """Name each offending field: 'tool_call_id: Field required'."""
    problems = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"][1:]) or "message"
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems)


def coerce_message(value: object) -> AnyMessage:
    """One message from a message, a dict, a (role, content) tuple or a string.

    A bare string is what a person said. Dicts may use `type` or `role`.
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
        return _validate({"type": _type_for_role(role), "content": content})
    if isinstance(value, Mapping):
        if "type" in value and value["type"] in MESSAGE_TYPES:
            return _validate(value)
        if "role" in value:
            data = {k: v for k, v in value.items() if k != "role"}
            data["type"] = _type_for_role(value["role"])
            return _validate(data)
        raise InvalidMessageError(
            f"A message dict needs a 'role' ({_ROLE_HINT}) or a 'type'; got keys {sorted(value)}"
        )
    if isinstance(value, BaseModel):
        raise InvalidMessageError(f"{type(value).__name__} is not a message type")
    raise InvalidMessageError(
        f"Cannot make a message from {type(value).__name__}; "
        "pass a message, a dict, a (role, content) tuple or a string"
    )


def coerce_messages(values: object) -> list[AnyMessage]:
    """A list of messages from one message-like value or an iterable of them."""
    if isinstance(values, (str, tuple, Mapping, BaseMessage, RemoveMessage)):
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
