"""The state schema as the engine sees it: fields, reducers, validation, and fast views.

Internally a run keeps its state as a plain dict of field values; nodes see
it as the schema's own type (a pydantic instance or a dict), built without
re-validating values the engine has already checked.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Mapping
from itertools import count
from operator import attrgetter
from typing import Annotated, Any, get_type_hints

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from flowgraph._ids import with_new_id
from flowgraph.errors import InvalidUpdateError
from flowgraph.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    coerce_messages,
)
from flowgraph.reducers import add_messages, with_known_positions, with_positions
from flowgraph.state import Reducer, field_reducers, is_typeddict_schema

__all__ = ["StateAdapter"]

_PLAIN_TYPES = frozenset({SystemMessage, HumanMessage, AIMessage, ToolMessage})
_MESSAGE_TYPES = _PLAIN_TYPES | {RemoveMessage}
_ID = attrgetter("id")
_new = object.__new__
# the slots of every pydantic model, set through their descriptors: a bound setter call
# costs about half of `object.__setattr__`'s name lookup, and messages are built often
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _default_maker(info: FieldInfo) -> Callable[[], Any]:
    """Makes a field's default for a new run: a fresh copy when it is mutable, as pydantic does."""
    factory = info.default_factory
    if factory is not None:
        if _takes_data(factory):
            return lambda: info.get_default(call_default_factory=True, validated_data={})
        return factory  # type: ignore[return-value]  # a no-argument factory
    default = info.default
    if isinstance(default, (str, bytes, int, float, bool, type(None), tuple, frozenset)):
        return lambda: default
    return lambda: copy.deepcopy(default)


def _takes_data(factory: Callable[..., Any]) -> bool:
    """True for a default factory that wants the validated data (asked once, at compile)."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False  # builtins such as list and dict take none
    required = [p for p in parameters.values() if p.default is inspect.Parameter.empty]
    return len(parameters) == 1 and len(required) == 1


def _describe(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()[:3]
    )


class StateAdapter:
    """Everything the engine needs to know about one state schema, computed once."""

    def __init__(self, schema: type[Any]) -> None:
        self.schema = schema
        self.is_model = isinstance(schema, type) and issubclass(schema, BaseModel)
        if not self.is_model and not is_typeddict_schema(schema):
            raise TypeError(
                f"StateGraph needs a pydantic model or a TypedDict as its schema, not {schema!r}; "
                "subclass MessagesState to start"
            )
        self.reducers: dict[str, Reducer | None] = field_reducers(schema)
        self.message_fields = frozenset(k for k, r in self.reducers.items() if r is add_messages)
        self.merges_need_ids = any(
            r is not None and r is not add_messages for r in self.reducers.values()
        )
        """A custom reducer may make message ids while merging; replaced fields and message
        fields (whose writes got their ids in `check_update`) never do."""
        self._validators: dict[str, TypeAdapter[Any]] = {}
        self._has_private = self.is_model and bool(schema.__private_attributes__)
        fields = schema.model_fields if self.is_model else {}
        self.required = tuple(name for name, info in fields.items() if info.is_required())
        self._defaults: list[tuple[str, Callable[[], Any]]] = [
            (name, _default_maker(info)) for name, info in fields.items() if not info.is_required()
        ]

    # -- values ---------------------------------------------------------------

    def defaults(self) -> dict[str, Any]:
        """The values a new thread starts with: each field's default, if it has one."""
        return {name: make() for name, make in self._defaults}

    def missing_required(self, values: Mapping[str, Any]) -> list[str]:
        """Required fields of a pydantic schema that no input has set yet."""
        return [name for name in self.required if name not in values]

    def view(self, values: dict[str, Any]) -> Any:
        """The state as a node sees it, sharing the (already valid) field values."""
        if not self.is_model:
            return dict(values)
        if self._has_private:
            return self.schema.model_construct(**values)
        state = _new(self.schema)
        _set_dict(state, dict(values))
        _set_fields_set(state, set(values))
        _set_extra(state, None)
        _set_private(state, None)
        return state

    def detached(self, values: dict[str, Any]) -> Any:
        """The state for a caller to keep: its lists, dicts and sets are copies.

        What a run hands back may also live on in the thread cache; a caller
        appending to `state.messages` must not change the thread.
        """
        return self.view(
            {
                key: value.copy() if isinstance(value, (list, dict, set)) else value
                for key, value in values.items()
            }
        )

    # -- updates --------------------------------------------------------------

    def check_update(
        self, node: str, update: Mapping[str, Any], *, positions: bool = False
    ) -> dict[str, Any]:
        """The update with every key known and every replaced value valid for its field.

        Reducer fields are left to their reducer (which accepts other shapes,
        e.g. a single message or a tuple); message fields get their ids here,
        so what is streamed and stored carries the ids the state will hold.
        With `positions`, message lists come back knowing their positions
        (`with_positions`), which `add_messages` takes over when it writes
        them into an empty field: a run's input, often a whole conversation
        passed back in, then has its ids read once, not twice.
        """
        checked = {}
        reducers = self.reducers
        for key, value in update.items():
            if key not in reducers:
                raise InvalidUpdateError(
                    f"Node '{node}' wrote to '{key}', which is not a field of "
                    f"{self.schema.__name__}; add the field to the schema or fix the key "
                    f"(fields: {', '.join(sorted(reducers))})",
                    node=node,
                    key=key,
                )
            if key in self.message_fields:
                checked[key] = self._with_ids(node, key, value, positions)
            elif reducers[key] is None:
                checked[key] = self._validate(node, key, value)
            else:
                checked[key] = value
        return checked

    def _with_ids(self, node: str, key: str, value: Any, positions: bool = False) -> list[Any]:
        # the common cases (a node's few new messages, or a conversation passed back in as
        # input with one new message at the end) take C-level passes over the list: only
        # the id-less messages cost a Python step
        if positions and type(value) is list and _PLAIN_TYPES.issuperset(map(type, value)):
            return _input_with_ids(value)
        if not positions and type(value) is list and _MESSAGE_TYPES.issuperset(map(type, value)):
            messages = value.copy()  # a node's new messages: a few, mostly without ids
            if not all(map(_ID, messages)):
                for i, message in enumerate(messages):
                    if message.id is None:
                        messages[i] = with_new_id(message)
            return messages
        kinds = set(map(type, value)) if isinstance(value, list) else None
        if kinds is not None and kinds <= _MESSAGE_TYPES:
            messages = list(value)
        else:
            messages = self._coerce(node, key, value)
        ids = list(map(_ID, messages))
        if not all(ids):  # a C-level pass; only when some id is None (or "") look closer
            _fill_ids(messages, ids)
        if positions and kinds is not None and kinds <= _PLAIN_TYPES:
            return with_positions(messages, ids)
        return messages

    def _coerce(self, node: str, key: str, value: Any) -> list[Any]:
        try:
            return coerce_messages(value)
        except ValueError as exc:
            raise InvalidUpdateError(
                f"Node '{node}' wrote to '{key}' something that is not a message: {exc}",
                node=node,
                key=key,
            ) from exc

    def _validate(self, node: str, key: str, value: Any) -> Any:
        validator = self._validators.get(key)
        if validator is None:
            validator = self._validators[key] = TypeAdapter(self._annotation(key))
        try:
            return validator.validate_python(value)
        except ValidationError as exc:
            raise InvalidUpdateError(
                f"Node '{node}' wrote an invalid value to '{key}': {_describe(exc)}",
                node=node,
                key=key,
            ) from exc

    def _annotation(self, key: str) -> Any:
        if self.is_model:
            info = self.schema.model_fields[key]
            return Annotated[info.annotation, info] if info.metadata else info.annotation
        return get_type_hints(self.schema, include_extras=True)[key]

    def apply(self, values: dict[str, Any], key: str, value: Any) -> None:
        """Merge one checked write into `values` through the field's reducer."""
        reducer = self.reducers[key]
        if reducer is None:
            values[key] = value
        elif key in values:
            values[key] = reducer(values[key], value)
        else:
            values[key] = reducer(_empty_like(value), value)


def _input_with_ids(value: list[Any]) -> list[Any]:
    """A list of plain messages with every id set, knowing its positions (`with_positions`).

    The input's shape, a history passed back in with at most one new
    (id-less) message, costs two C-level passes: the id -> position map is
    built first, and only a None among its keys asks for an id. Anything
    else (several id-less messages, a repeated id) takes the general way,
    which gives the same result.
    """
    known = dict(zip(map(_ID, value), count()))
    if len(known) != len(value):  # a repeated id, or several id-less messages
        messages = list(value)
        ids = list(map(_ID, messages))
        _fill_ids(messages, ids)
        return with_positions(messages, ids)
    missing = known.pop(None, None)
    if missing is None:
        return with_known_positions(value, known)
    messages = list(value)
    message = messages[missing] = with_new_id(value[missing])
    if message.id in known:  # the new id repeats one already there: the merge resolves it
        return messages
    known[message.id] = missing
    return with_known_positions(messages, known)


def _fill_ids(messages: list[Any], ids: list[Any]) -> None:
    """Give each id-less message (and its slot in `ids`) the run's next deterministic id."""
    for i, message_id in enumerate(ids):
        if message_id is None:
            message = messages[i] = with_new_id(messages[i])
            ids[i] = message.id


def _empty_like(value: Any) -> Any:
    """What a reducer field holds before its first write: an empty container of its kind."""
    if isinstance(value, (list, tuple)):
        return []
    if isinstance(value, dict):
        return {}
    if isinstance(value, (set, frozenset)):
        return set()
    return type(value)() if isinstance(value, (int, float, str)) else None
