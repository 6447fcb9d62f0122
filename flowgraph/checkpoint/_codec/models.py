"""Registered classes: pydantic models and Enums, written under a name, read back by it.

The data names a class only by the string it was registered under; loading
looks that string up in this registry and nowhere else, so a checkpoint can
build no class the program did not register, and never imports one.

A model is written as `[name, {field: value}]` with the fields that equal
their default left out. That keeps checkpoints small and makes schema
evolution follow pydantic's own rules:

- a field added later with a default loads old data with that default;
- a field removed later is ignored on load (kept as an extra if the model
  allows extras), so old checkpoints keep loading;
- a field added later without a default makes old data fail to load with a
  DeserializationError naming it: give it a default;
- renaming a field loses its old values (there is no alias lookup);
- moving or renaming the class changes its default name: pin the old one
  with `register(cls, name="old.module.Name")`.

Models are built back like `model_construct` (values as stored, no
validators; `model_post_init` runs): they were validated when written and
the envelope's CRC guards the bytes. An Enum member is written as its value
and rebuilt by `cls(value)`.
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any, Final

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from flowgraph.checkpoint._codec.core import (
    DECODERS,
    ENCODERS,
    ENUM,
    MODEL,
    Corrupt,
    Decoder,
    Encoder,
    ext,
)
from flowgraph.checkpoint._codec.messages import MESSAGE_CLASSES, messages_value
from flowgraph.errors import DeserializationError, SerializationError
from flowgraph.state import MessagesState

__all__ = ["BUILTIN_CLASSES", "register_class", "registered_name"]

_OMIT_IF_EQUAL: Final = 1
_OMIT_IF_EMPTY: Final = 2
_SCALARS = frozenset({type(None), bool, int, float, str, bytes})
_EMPTY_FACTORIES: dict[object, type] = {t: t for t in (list, dict, set, frozenset, tuple)}

_new = object.__new__
_set_dict = vars(BaseModel)["__dict__"].__set__
_set_fields_set = vars(BaseModel)["__pydantic_fields_set__"].__set__
_set_extra = vars(BaseModel)["__pydantic_extra__"].__set__
_set_private = vars(BaseModel)["__pydantic_private__"].__set__


def _is_default(value: object, default: object) -> bool:
    """True when leaving `value` out loses nothing: same type, equal (and same sign of 0.0)."""
    if value is default:
        return True
    if type(value) is not type(default) or value != default:
        return False
    return type(value) is not float or math.copysign(1.0, value) == math.copysign(1.0, default)  # type: ignore[arg-type]


class _ModelCodec:
    """How one registered model class is written and rebuilt."""

    __slots__ = ("cls", "fields", "name", "plan")

    def __init__(self, cls: type[BaseModel], name: str) -> None:
        self.cls = cls
        self.name = name
        self.fields: list[tuple[str, FieldInfo]] = list(cls.model_fields.items())
        plan: list[tuple[str, int, object]] = []
        for field_name, info in self.fields:
            factory = info.default_factory
            if factory is not None:
                empty = _EMPTY_FACTORIES.get(factory)
                plan.append((field_name, _OMIT_IF_EMPTY if empty else 0, empty))
            elif not info.is_required() and (
                type(info.default) in _SCALARS
                or isinstance(info.default, Enum)
                or (type(info.default) in _EMPTY_FACTORIES and not info.default)
            ):
                plan.append((field_name, _OMIT_IF_EQUAL, info.default))
            else:
                plan.append((field_name, 0, None))
        self.plan = plan

    def encode(self, encoder: Encoder, model: BaseModel) -> object:
        values = model.__dict__
        fields: dict[str, object] = {}
        for field_name, omit, default in self.plan:
            value = values[field_name]
            if omit == _OMIT_IF_EQUAL:
                if _is_default(value, default):
                    continue
            elif omit == _OMIT_IF_EMPTY and type(value) is default and not value:
                continue
            if type(value) is list and value and type(value[0]) in MESSAGE_CLASSES:
                value = messages_value(encoder, value)
            fields[field_name] = value
        extra = model.__pydantic_extra__
        if extra:
            fields.update(extra)
        name = self.name
        data = encoder.pack([encoder.name_ref(name), fields])
        encoder.name_written(name)
        return ext(MODEL, data)

    def build(self, stored: dict[Any, Any]) -> BaseModel:
        """The model from its stored fields: defaults for the missing, extras kept or dropped."""
        cls = self.cls
        values: dict[str, Any] = {}
        fields_set = set()
        for field_name, info in self.fields:
            if field_name in stored:
                values[field_name] = stored.pop(field_name)
                fields_set.add(field_name)
            elif info.is_required():
                raise DeserializationError(
                    f"Cannot load {self.name}: the stored data has no value for its required "
                    f"field {field_name!r} (added after the data was written?); give the field "
                    "a default so older checkpoints load"
                )
            elif info.default_factory is None:
                values[field_name] = info.get_default()
            elif getattr(info, "default_factory_takes_validated_data", False):
                values[field_name] = info.default_factory(values)  # type: ignore[call-arg]
            else:
                values[field_name] = info.default_factory()  # type: ignore[call-arg]
        if any(type(key) is not str for key in stored):
            raise Corrupt(f"bad field name in {self.name}")
        model = _new(cls)
        _set_dict(model, values)
        _set_fields_set(model, fields_set)
        if not cls.__pydantic_root_model__:
            _set_extra(model, stored if cls.model_config.get("extra") == "allow" else None)
            _set_private(model, None)
        if cls.__pydantic_post_init__:
            model.model_post_init(None)  # initialises private attributes, as model_construct does
        return model


class _EnumCodec:
    """How one registered Enum class is written (by member value) and rebuilt."""

    __slots__ = ("cls", "name")

    def __init__(self, cls: type[Enum], name: str) -> None:
        self.cls = cls
        self.name = name

    def encode(self, encoder: Encoder, member: Enum) -> object:
        name = self.name
        data = encoder.pack([encoder.name_ref(name), member._value_])
        encoder.name_written(name)
        return ext(ENUM, data)

    def build(self, value: object) -> Enum:
        try:
            return self.cls(value)
        except ValueError:
            raise DeserializationError(
                f"Cannot load {self.name}: {value!r} is no longer one of its values; "
                "keep the member (or an alias with that value) so older checkpoints load"
            ) from None


_BY_NAME: dict[str, _ModelCodec | _EnumCodec] = {}
_BY_CLASS: dict[type, _ModelCodec | _EnumCodec] = {}


def registered_name(cls: type) -> str | None:
    """The name `cls` is registered under, if it is."""
    codec = _BY_CLASS.get(cls)
    return None if codec is None else codec.name


def register_class(cls: type, name: str | None) -> None:
    """Enter `cls` in the registry (see `serde.register` for the contract)."""
    if not isinstance(cls, type) or not issubclass(cls, (BaseModel, Enum)):
        raise SerializationError(
            f"serde.register takes a pydantic model class or an Enum class, not {cls!r}",
            type_name=getattr(cls, "__qualname__", type(cls).__qualname__),
        )
    if cls in BUILTIN_CLASSES and name is None:
        return  # messages, parts and the like are built in
    if name is None:
        name = f"{cls.__module__}.{cls.__qualname__}"
    if type(name) is not str or not name:
        raise SerializationError(f"a registered name is a non-empty str, not {name!r}")
    taken = _BY_NAME.get(name)
    if taken is not None and taken.cls is not cls:
        raise SerializationError(
            f"The name {name!r} is already registered for {taken.cls!r}; register "
            f"{cls.__qualname__} under another name: serde.register({cls.__qualname__}, "
            'name="...")',
            type_name=cls.__qualname__,
        )
    previous = _BY_CLASS.get(cls)
    if previous is not None:
        if previous.name == name:
            return
        raise SerializationError(
            f"{cls.__qualname__} is already registered as {previous.name!r}; a class has one "
            "name (data written under it must stay loadable)",
            type_name=cls.__qualname__,
        )
    if cls in BUILTIN_CLASSES:
        raise SerializationError(f"{cls.__qualname__} is built into the codec; it takes no name")
    codec: _ModelCodec | _EnumCodec
    codec = _ModelCodec(cls, name) if issubclass(cls, BaseModel) else _EnumCodec(cls, name)
    _BY_NAME[name] = codec
    _BY_CLASS[cls] = codec
    ENCODERS[cls] = codec.encode


def _lookup(decoder: Decoder, data: bytes) -> tuple[_ModelCodec | _EnumCodec, object]:
    record = decoder.decode(data)
    if type(record) is not list or len(record) != 2:
        raise Corrupt("bad registered-class record")
    name = decoder.resolve(record[0])
    codec = _BY_NAME.get(name)
    if codec is None:
        raise DeserializationError(
            f"The checkpoint holds a {name!r}, but no class is registered under that name; "
            f"register it before loading: serde.register({name.rpartition('.')[2]}) "
            '(from flowgraph.checkpoint import serde), or serde.register(cls, name="'
            f'{name}") if the class has moved'
        )
    return codec, record[1]


def _decode_model(decoder: Decoder, data: bytes) -> object:
    codec, stored = _lookup(decoder, data)
    if type(codec) is not _ModelCodec or type(stored) is not dict:
        raise Corrupt(f"bad {codec.name} record")
    return codec.build(stored)


def _decode_enum(decoder: Decoder, data: bytes) -> object:
    codec, value = _lookup(decoder, data)
    if type(codec) is not _EnumCodec:
        raise Corrupt(f"bad {codec.name} record")
    return codec.build(value)


DECODERS[MODEL] = _decode_model
DECODERS[ENUM] = _decode_enum

BUILTIN_CLASSES = frozenset(ENCODERS)
"""Every class the codec handles without registration."""

register_class(MessagesState, None)
