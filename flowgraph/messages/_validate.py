"""Validating a message dict, and the role names of both worlds, with errors per field.

Role names of both worlds are accepted (OpenAI's user/assistant and
LangChain's human/ai). The lowest converter: `_from_openai` and `_coerce`
build on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from flowgraph.errors import InvalidMessageError
from flowgraph.messages._messages import AnyMessage, message_adapter

__all__ = ["ROLE_TO_TYPE", "type_for_role", "validate_message_dict"]

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


def type_for_role(role: object) -> str:
    """The message `type` for an OpenAI or LangChain role name; unknown: a clear error."""
    message_type = ROLE_TO_TYPE.get(role) if isinstance(role, str) else None
    if message_type is None:
        raise InvalidMessageError(f"Unknown message role {role!r}; use one of: {_ROLE_HINT}")
    return message_type


def validate_message_dict(data: Mapping[str, Any]) -> AnyMessage:
    """A message from a dict with a `type`; errors name each offending field."""
    try:
        return message_adapter.validate_python(data)
    except ValidationError as exc:
        kind = data.get("type")
        raise InvalidMessageError(
            f"Invalid {kind} message: {_describe(exc)}", message_id=data.get("id")
        ) from exc


def _describe(exc: ValidationError) -> str:
    """Name each offending field: 'tool_call_id: Field required', 'content.1.image.data: ...'.

    pydantic's union branch labels (`str`, `list[...]`, `function-after[...]`)
    are left out of the path, and when a list went wrong inside, the "should
    be a string" complaint of the other branch is dropped as noise.
    """
    located = []
    for error in exc.errors():
        loc = error["loc"][1:]  # [0] is the message type tag
        path = [str(p) for p in loc if not _is_branch_label(p)]
        is_other_branch = bool(loc) and loc[-1] == "str" and error["type"] == "string_type"
        located.append((".".join(path) or "message", error["msg"], is_other_branch))
    deeper = {where for where, _, _ in located}
    problems = [
        f"{where}: {msg}"
        for where, msg, is_other_branch in located
        if not (is_other_branch and any(d.startswith(f"{where}.") for d in deeper))
    ]
    return "; ".join(dict.fromkeys(problems))


def _is_branch_label(segment: object) -> bool:
    return isinstance(segment, str) and (segment in ("str", "list") or "[" in segment)
