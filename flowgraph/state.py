"""State schemas: MessagesState, and which reducer merges each field.

A schema is a pydantic model or a TypedDict. A field annotated
`Annotated[T, reducer]` merges updates through `reducer(old, new)`; any
other field is replaced by the update.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin, get_type_hints, is_typeddict

from pydantic import BaseModel, ConfigDict, Field

from flowgraph.messages import AnyMessage
from flowgraph.reducers import add_messages

__all__ = ["MessagesState", "Reducer", "field_reducers", "is_typeddict_schema"]

Reducer = Callable[[Any, Any], Any]


class MessagesState(BaseModel):
    """The state most agents need: a message list merged by id. Subclass to add fields."""

    model_config = ConfigDict(defer_build=True)
    """The validator is built on first validation, not at import: the engine builds
    state views without it, and a cold process resuming a thread may never need it."""

    messages: Annotated[list[AnyMessage], add_messages] = Field(default_factory=list)


def is_typeddict_schema(schema: object) -> bool:
    """True for a TypedDict class (a state given as plain dicts)."""
    return is_typeddict(schema)


def _reducer_in(metadata: tuple[Any, ...] | list[Any]) -> Reducer | None:
    callables = [m for m in metadata if callable(m) and not isinstance(m, type)]
    return callables[-1] if callables else None


def field_reducers(schema: type[Any]) -> dict[str, Reducer | None]:
    """Every field of `schema`, mapped to its reducer (None: the update replaces it)."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return {name: _reducer_in(info.metadata) for name, info in schema.model_fields.items()}
    if is_typeddict(schema):
        hints = get_type_hints(schema, include_extras=True)
        return {
            name: _reducer_in(get_args(hint)[1:]) if get_origin(hint) is Annotated else None
            for name, hint in hints.items()
        }
    raise TypeError(
        f"A state schema is a pydantic model or a TypedDict, not {schema!r}; "
        "subclass MessagesState to start"
    )
