"""State schemas: MessagesState, and which reducer merges each field.

A schema is a pydantic model, a TypedDict (`typing`'s or
`typing_extensions`') or a dataclass. A field annotated `Annotated[T, reducer]` merges
updates through `reducer(old, new)`; any other field is replaced by the
update. A TypedDict's `Required[...]`, `NotRequired[...]` and `ReadOnly[...]`
wrappers say whether the key must be there, not how it merges: they are
looked through.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin, get_type_hints, is_typeddict

from pydantic import BaseModel, ConfigDict, Field

from flowgraph.messages import AnyMessage
from flowgraph.reducers import add_messages

__all__ = [
    "MessagesState",
    "Reducer",
    "RemainingSteps",
    "field_reducers",
    "is_dataclass_schema",
    "is_typeddict_schema",
    "managed_fields",
]

Reducer = Callable[[Any, Any], Any]


class MessagesState(BaseModel):
    """The state most agents need: a message list merged by id. Subclass to add fields."""

    model_config = ConfigDict(defer_build=True)
    """The validator is built on first validation, not at import: the engine builds
    state views without it, and a cold process resuming a thread may never need it."""

    messages: Annotated[list[AnyMessage], add_messages] = Field(default_factory=list)

    # LangGraph's MessagesState is a TypedDict, read as a mapping; so can this one be.
    # A subclass's field declared without a default is unset until written: absent here.

    def __getitem__(self, key: str) -> Any:
        """`state["messages"]`: a field's value; KeyError when it is not a field or unset."""
        try:
            return self.__dict__[key]
        except KeyError:
            raise KeyError(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        """`state.get("summary", "")`: a field's value, or `default` when it is unset."""
        return self.__dict__.get(key, default)

    def __contains__(self, key: object) -> bool:
        """`"summary" in state`: True when the field has a value."""
        return key in self.__dict__

    def __repr__(self) -> str:
        # printed as the dict LangGraph's state is: the fields that have a value, in order
        # (and a paused run's "__interrupt__"), so `print(graph.invoke(...))` reads the same
        return repr(dict(self.__dict__))

    __str__ = __repr__


class ManagedValue:
    """Marks a state field whose value the engine supplies (never stored, never written)."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"ManagedValue({self.kind!r})"


REMAINING_STEPS = ManagedValue("remaining_steps")

RemainingSteps = Annotated[int, REMAINING_STEPS]
"""A state field typed `RemainingSteps` reads how many more steps the run may take after
the current one before its recursion limit stops it (0 in the last allowed step), as in
LangGraph: `if state["remaining_steps"] < 2: return END`. The engine fills it for every
node; it is never stored in checkpoints, never returned by `invoke`, and writing it is an
error."""


def is_typeddict_schema(schema: object) -> bool:
    """True for a TypedDict class (a state given as plain dicts), whichever module made it.

    `typing.is_typeddict` is False on Python 3.11 for a `typing_extensions`
    TypedDict (a class of its own there), which LangGraph's docs use; both
    are dict subclasses that know their required and optional keys.
    """
    return is_typeddict(schema) or (
        isinstance(schema, type)
        and issubclass(schema, dict)
        and type(schema).__name__ == "_TypedDictMeta"
        and hasattr(schema, "__required_keys__")
    )


_QUALIFIERS = frozenset({"Required", "NotRequired", "ReadOnly"})


def _without_qualifiers(hint: Any) -> Any:
    """`hint` without TypedDict key qualifiers: NotRequired[Annotated[T, r]] -> Annotated[T, r]."""
    while getattr(get_origin(hint), "_name", None) in _QUALIFIERS:
        hint = get_args(hint)[0]
    return hint


def is_dataclass_schema(schema: object) -> bool:
    """True for a dataclass used as a state schema (its nodes get an instance of it)."""
    return isinstance(schema, type) and dataclasses.is_dataclass(schema)


def typeddict_hints(schema: type[Any]) -> dict[str, Any]:
    """A TypedDict's (or a dataclass's) field types, `Annotated` kept, key qualifiers removed."""
    hints = get_type_hints(schema, include_extras=True)
    if is_dataclass_schema(schema):  # its fields only, not its ClassVars
        return {f.name: _without_qualifiers(hints[f.name]) for f in dataclasses.fields(schema)}
    return {name: _without_qualifiers(hint) for name, hint in hints.items()}


def _reducer_in(metadata: tuple[Any, ...] | list[Any]) -> Reducer | None:
    callables = [m for m in metadata if callable(m) and not isinstance(m, type)]
    return callables[-1] if callables else None


def _field_metadata(schema: type[Any]) -> dict[str, tuple[Any, ...]]:
    """Each field's `Annotated` metadata (empty for a plain hint)."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return {name: tuple(info.metadata) for name, info in schema.model_fields.items()}
    if is_typeddict_schema(schema) or is_dataclass_schema(schema):
        hints = typeddict_hints(schema)
        return {
            name: tuple(get_args(hint)[1:]) if get_origin(hint) is Annotated else ()
            for name, hint in hints.items()
        }
    raise TypeError(
        f"A state schema is a pydantic model, a TypedDict or a dataclass, not {schema!r}; "
        "subclass MessagesState to start"
    )


def managed_fields(schema: type[Any]) -> dict[str, str]:
    """The fields of `schema` the engine supplies (`RemainingSteps`), mapped to their kind."""
    managed = {}
    for name, metadata in _field_metadata(schema).items():
        for item in metadata:
            if isinstance(item, ManagedValue):
                managed[name] = item.kind
    return managed


def field_reducers(schema: type[Any]) -> dict[str, Reducer | None]:
    """Every field of `schema` a node may write, mapped to its reducer (None: the update
    replaces it). Managed fields (`RemainingSteps`) are not among them."""
    return {
        name: _reducer_in(metadata)
        for name, metadata in _field_metadata(schema).items()
        if not any(isinstance(item, ManagedValue) for item in metadata)
    }
