"""The state schema as the engine sees it: fields, reducers, validation, and fast views.

Internally a run keeps its state as a plain dict of field values; nodes see
it as the schema's own type (a pydantic instance or a dict), built without
re-validating values the engine has already checked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from itertools import count
from operator import attrgetter
from typing import Annotated, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from flowgraph._ids import with_new_id
from flowgraph.errors import InvalidUpdateError
from flowgraph.graph._core.starts import default_maker, empty_like, reducer_start
from flowgraph.graph._core.types import START
from flowgraph.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    coerce_messages,
)
from flowgraph.reducers import add_messages, with_known_positions, with_positions
from flowgraph.state import (
    MessagesState,
    Reducer,
    field_reducers,
    is_dataclass_schema,
    is_typeddict_schema,
    managed_fields,
    typeddict_hints,
)

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


def _describe(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()[:3]
    )


class StateAdapter:
    """Everything the engine needs to know about one state schema, computed once.

    Other schemas may add keys: a node's input type (its first parameter's
    annotation) and the graph's input and output schemas. Their fields the
    state schema lacks are private keys: nodes may write them, nodes whose
    input type has them read them, and they never show in the state's own
    view, nor in what `invoke` returns.
    """

    def __init__(self, schema: type[Any]) -> None:
        self.schema = schema
        self.is_model = isinstance(schema, type) and issubclass(schema, BaseModel)
        self.is_dataclass = is_dataclass_schema(schema)
        if not self.is_model and not self.is_dataclass and not is_typeddict_schema(schema):
            raise TypeError(
                f"StateGraph needs a pydantic model, a TypedDict or a dataclass as its schema, "
                f"not {schema!r}; subclass MessagesState to start"
            )
        if self.is_model:
            _read_as_mapping(schema)
        self.reducers: dict[str, Reducer | None] = field_reducers(schema)
        self.managed: dict[str, str] = managed_fields(schema)
        """Fields the engine supplies (`RemainingSteps`): read by nodes, never written or
        stored, by their kind."""
        self._own = frozenset(self.reducers) | frozenset(self.managed)
        self._order = tuple(
            k for k in (typeddict_hints(schema) if not self.is_model else ()) if k in self._own
        )
        self._init_fields = (
            frozenset(f.name for f in dataclasses.fields(schema) if f.init)
            if self.is_dataclass
            else frozenset()
        )
        self.visible = self._own
        """The keys the state's view shows: a step writing none of them changes no view."""
        self._foreign: dict[str, type[Any]] = {}
        """Private keys: the schema that declared each one (for its type)."""
        self.input_keys: frozenset[str] | None = None
        """The keys an input may set (None: any field); set by `set_input`."""
        self._output: Callable[[dict[str, Any]], Any] | None = None
        self._final: tuple[str, ...] = tuple(
            k
            for k in (schema.model_fields if self.is_model else typeddict_hints(schema))
            if k in self.reducers
        )
        """The fields a run ends with, in the schema's order (see `final_values`)."""
        self._fields_changed()
        self._validators: dict[str, TypeAdapter[Any]] = {}
        self._has_private = self.is_model and bool(schema.__private_attributes__)
        fields = schema.model_fields if self.is_model else {}
        # as in LangGraph, a reducer's field starts as its type's empty value (`[]` for
        # `Annotated[list, operator.add]`): it need not be given; a pydantic field's own
        # default is kept
        hints = (
            {n: i.annotation for n, i in fields.items()}
            if self.is_model
            else typeddict_hints(schema)
        )
        starts = {
            name: empty
            for name, reducer in self.reducers.items()
            if reducer is not None and (empty := reducer_start(hints.get(name))) is not None
        }
        # LangGraph's MessagesState is a TypedDict, so a subclass's fields need not be given:
        # ours leaves a field declared without a default unset (absent from the view) until
        # a node or an input writes it
        optional = isinstance(schema, type) and issubclass(schema, MessagesState)
        self.required = (
            ()
            if optional
            else tuple(
                n
                for n, i in fields.items()
                if i.is_required() and n not in self.managed and n not in starts
            )
        )
        if self.is_dataclass:  # a field without a default must be given
            self.required = tuple(
                f.name
                for f in dataclasses.fields(schema)
                if f.init
                and f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING
                and f.name not in self.managed
                and f.name not in starts
            )
        self._defaults: list[tuple[str, Callable[[], Any]]] = [
            (name, default_maker(info))
            for name, info in fields.items()
            if not info.is_required() and name not in self.managed
        ]
        self._defaults += [
            (name, empty)
            for name, empty in starts.items()
            if not (name in fields and not fields[name].is_required())
        ]
        self.node_view: Callable[[dict[str, Any]], Any] = (
            self._instance if self.is_dataclass else self.view
        )
        """The state as a node (or a conditional edge) gets it: `view`, but an instance of a
        dataclass schema, whose other views are dicts as LangGraph's are."""

    def _fields_changed(self) -> None:
        self.message_fields = frozenset(k for k, r in self.reducers.items() if r is add_messages)
        self.merges_need_ids = any(
            r is not None and r is not add_messages for r in self.reducers.values()
        )
        """A custom reducer may make message ids while merging; replaced fields and message
        fields (whose writes got their ids in `check_update`) never do."""

    # -- other schemas --------------------------------------------------------

    def is_state_type(self, schema: object) -> bool:
        """True when a node annotated with `schema` gets the state itself.

        That is the schema, or a pydantic model it subclasses (a node typed
        `MessagesState` in a graph of a subclass of it).
        """
        if schema is self.schema:
            return True
        return (
            self.is_model
            and isinstance(schema, type)
            and issubclass(schema, BaseModel)
            and issubclass(self.schema, schema)
        )

    def add_schema(self, schema: type[Any]) -> None:
        """Take in the fields of `schema` that the state lacks, as private keys."""
        added = False
        for name, reducer in field_reducers(schema).items():
            if name not in self.reducers and name not in self.managed:
                self.reducers[name] = reducer
                self._foreign[name] = schema
                added = True
        for name, kind in managed_fields(schema).items():
            self.managed.setdefault(name, kind)
        if added:
            self._fields_changed()

    def viewer(self, schema: type[Any]) -> Callable[[dict[str, Any]], Any]:
        """How a node typed `schema` sees the values: only its fields, as a `schema`.

        Its fields the state lacks become private keys. A pydantic type is
        built without validation (the values were checked when written);
        its fields no one has written yet take their defaults, or stay unset.
        """
        if self.is_state_type(schema):
            return self.node_view
        self.add_schema(schema)
        keys = (*field_reducers(schema), *managed_fields(schema))
        if is_dataclass_schema(schema):
            made = schema

            def view_dataclass(values: dict[str, Any]) -> Any:
                return made(**{k: values[k] for k in keys if k in values})

            return view_dataclass
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            model = schema

            def view_model(values: dict[str, Any]) -> Any:
                return model.model_construct(**{k: values[k] for k in keys if k in values})

            return view_model

        def view_dict(values: dict[str, Any]) -> Any:
            return {k: values[k] for k in keys if k in values}

        return view_dict

    def set_input(self, schema: type[Any]) -> None:
        """Only `schema`'s fields may be given as input; those the state lacks become private."""
        self.add_schema(schema)
        self.input_keys = frozenset(field_reducers(schema))

    def set_output(self, schema: type[Any]) -> None:
        """What a run returns is `schema`'s fields only, as a `schema`."""
        self._output = self.viewer(schema)
        self._final = tuple(field_reducers(schema))

    # -- values ---------------------------------------------------------------

    def defaults(self) -> dict[str, Any]:
        """The values a new thread starts with: each field's default, if it has one."""
        return {name: make() for name, make in self._defaults}

    def missing_required(self, values: Mapping[str, Any]) -> list[str]:
        """Required fields of a pydantic schema that no input has set yet."""
        return [name for name in self.required if name not in values]

    def view(self, values: dict[str, Any]) -> Any:
        """The state as a node sees it, sharing the (already valid) field values."""
        if self._foreign:  # private keys are not the state's
            own = self._own
            values = {k: v for k, v in values.items() if k in own}
        if not self.is_model:  # in the schema's field order, as LangGraph's dicts are
            return {k: values[k] for k in self._order if k in values}
        if self._has_private:
            return self.schema.model_construct(**values)
        state = _new(self.schema)
        _set_dict(state, dict(values))
        _set_fields_set(state, set(values))
        _set_extra(state, None)
        _set_private(state, None)
        return state

    def _instance(self, values: dict[str, Any]) -> Any:
        """A dataclass state built from the values (its defaults fill the fields not set)."""
        fields = self._init_fields
        try:
            return self.schema(**{k: v for k, v in values.items() if k in fields})
        except TypeError as exc:
            missing = [k for k in self.required if k not in values]
            raise InvalidUpdateError(
                f"{self.schema.__name__} cannot be built from the state ({exc}); give "
                f"{', '.join(missing) or 'its fields'} in the input or give them defaults",
                node=START,
            ) from exc

    def shows(self, writes: Sequence[tuple[str, Any]]) -> bool:
        """Whether `writes` change what the view shows (a "values" stream part is due)."""
        visible = self.visible
        return any(key in visible for key, _ in writes)

    def shown(self, writes: Sequence[tuple[str, Any]]) -> Any:
        """A task's writes as its "updates" stream part shows them: one dict of fields.

        A key written several times (a Command's list of pairs) lists every value it was
        given.
        """
        update: dict[str, Any] = {}
        for key, value in writes:
            if key in update and isinstance(value, list) and isinstance(update[key], list):
                update[key] = [*update[key], *value]
            else:
                update[key] = value
        return update

    def output(self, values: dict[str, Any]) -> Any:
        """What a run returns: the state (or the output schema's part of it), detached."""
        if self._output is None:
            return self.detached(values)
        values = _copied(values)
        return self._output(self.stored(values) if self.managed else values)

    def final_values(self, values: dict[str, Any]) -> dict[str, Any]:
        """The fields a run returns (the output schema's, else the state's), as a plain dict:
        what a subgraph node hands to its parent graph's reducers."""
        return {k: values[k] for k in self._final if k in values}

    def detached(self, values: dict[str, Any]) -> Any:
        """The state for a caller to keep: its lists, dicts and sets are copies.

        What a run hands back may also live on in the thread cache; a caller
        appending to `state.messages` must not change the thread. Managed
        fields (`RemainingSteps`) are the run's own and are left out.
        """
        values = _copied(values)
        return self.view(self.stored(values) if self.managed else values)

    def stored(self, values: dict[str, Any]) -> dict[str, Any]:
        """`values` without managed fields: what checkpoints and callers get."""
        managed = self.managed
        return {k: v for k, v in values.items() if k not in managed} if managed else values

    # -- updates --------------------------------------------------------------

    def check_update(
        self, node: str, update: Mapping[str, Any], *, positions: bool = False
    ) -> dict[str, Any]:
        """The update with every key known and every replaced value valid for its field.

        Reducer fields are left to their reducer (which accepts other shapes,
        e.g. a single message or a tuple); message fields get their ids here,
        so what is streamed and stored carries the ids the state will hold.
        With `positions` (the update is a run's input), message lists come
        back knowing their positions (`with_positions`), which `add_messages`
        takes over when it writes them into an empty field: a run's input,
        often a whole conversation passed back in, then has its ids read
        once, not twice; and with an input schema, only its keys are taken.
        """
        checked = {}
        reducers = self.reducers
        if positions and self.input_keys is not None:
            self._check_input(update)
        for key, value in update.items():
            if key not in reducers:
                if key in self.managed:
                    raise InvalidUpdateError(
                        f"Node '{node}' wrote to '{key}', which the engine manages "
                        f"({self.managed[key]}): nodes read it, and nothing writes it",
                        node=node,
                        key=key,
                    )
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

    def _check_input(self, update: Mapping[str, Any]) -> None:
        assert self.input_keys is not None
        for key in update:
            if key not in self.input_keys:
                raise InvalidUpdateError(
                    f"The input sets '{key}', which is not a field of the graph's input "
                    f"schema; pass only {', '.join(sorted(self.input_keys))}",
                    node="__start__",
                    key=key,
                )

    def _annotation(self, key: str) -> Any:
        schema = self._foreign.get(key, self.schema)
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            info = schema.model_fields[key]
            return Annotated[info.annotation, info] if info.metadata else info.annotation
        return typeddict_hints(schema)[key]

    def apply(self, values: dict[str, Any], key: str, value: Any) -> None:
        """Merge one checked write into `values` through the field's reducer."""
        reducer = self.reducers[key]
        if reducer is None:
            values[key] = value
        elif key in values:
            values[key] = reducer(values[key], value)
        else:
            values[key] = reducer(empty_like(value), value)


def _copied(values: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value.copy() if isinstance(value, (list, dict, set)) else value
        for key, value in values.items()
    }


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


def _field(self: BaseModel, key: str) -> Any:
    """`result["a"]`: a field's value (KeyError when it is not a field or is unset)."""
    try:
        return self.__dict__[key]
    except KeyError:
        raise KeyError(key) from None


def _field_or(self: BaseModel, key: str, default: Any = None) -> Any:
    """`result.get("a", default)`: a field's value, or `default` when it is unset."""
    return self.__dict__.get(key, default)


def _has_field(self: BaseModel, key: object) -> bool:
    """`"a" in result`: True when the field has a value."""
    return key in self.__dict__


def _field_names(self: BaseModel) -> Any:
    """`result.keys()`: the fields that have a value, in the schema's order."""
    return [k for k in type(self).model_fields if k in self.__dict__]


def _field_items(self: BaseModel) -> Any:
    """`result.items()`: the fields that have a value, with it, in the schema's order."""
    return [(k, self.__dict__[k]) for k in _field_names(self)]


_MAPPING_READS: dict[str, Callable[..., Any]] = {
    "__getitem__": _field,
    "get": _field_or,
    "__contains__": _has_field,
    "keys": _field_names,
    "items": _field_items,
}


def _read_as_mapping(schema: type[BaseModel]) -> None:
    """Let a pydantic state read as LangGraph's dict does (`result["a"]`, `.get`, `in`,
    `keys()`, `items()`, `dict(result)`), where its class defines none of these itself:
    LangGraph returns a dict from `invoke`, flowgraph the schema's instance."""
    for name, read in _MAPPING_READS.items():
        if name not in schema.model_fields and getattr(schema, name, None) is getattr(
            BaseModel, name, None
        ):
            setattr(schema, name, read)
