"""Reading a node's input: a pydantic state, a TypedDict state (a dict), or a message list."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from flowgraph.messages import AnyMessage

__all__ = ["messages_of", "state_value", "state_variables"]

_MISSING: Any = object()


def state_value(state: Any, key: str, default: Any = _MISSING, *, who: str) -> Any:
    """The field `key` of `state`; a clear error naming `who` when it is absent."""
    if isinstance(state, Mapping):
        value = state.get(key, _MISSING)
    else:
        value = getattr(state, key, _MISSING)
    if value is _MISSING:
        if default is not _MISSING:
            return default
        fields = (
            list(state)
            if isinstance(state, Mapping)
            else list(type(state).model_fields)
            if isinstance(state, BaseModel)
            else []
        )
        known = f"; the state has: {', '.join(map(str, fields))}" if fields else ""
        raise ValueError(f"{who} reads state field '{key}', which the state does not have{known}")
    return value


def messages_of(state: Any, key: str, *, who: str) -> Sequence[AnyMessage]:
    """The message list in `state[key]` (or `state` itself when it is a list of messages)."""
    if isinstance(state, list):
        return state
    messages = state_value(state, key, who=who)
    if not isinstance(messages, Sequence) or isinstance(messages, str):
        raise TypeError(f"{who} expects a message list in state field '{key}', not {messages!r}")
    return messages


def state_variables(state: Any, names: Sequence[str]) -> dict[str, Any]:
    """The state fields a template needs, read without copying the rest of the state."""
    out = {}
    for name in names:
        value = (
            state.get(name, _MISSING)
            if isinstance(state, Mapping)
            else getattr(state, name, _MISSING)
        )
        if value is not _MISSING:
            out[name] = value
    return out
