"""Explaining a failed `dumps`: which value, where in the structure, and the fix.

The fast path (msgpack in C) cannot say where it was when a value failed,
so after a failure this walks the value again in Python, the way the
encoder does, and reports the first value no encoder takes, with its path:
`.key` for dict keys and model fields, `[i]` for list and tuple items
(`['odd key']` for keys that are not identifiers), `{item}` for set items.
"""

from __future__ import annotations

from enum import Enum
from typing import Final

from pydantic import BaseModel

from flowgraph.checkpoint._codec.core import ENCODERS, MAX_NESTING, Encoder, Unsupported
from flowgraph.errors import SerializationError

__all__ = ["explain"]

_MAX_DEPTH: Final = 400
_SCALARS = frozenset({type(None), bool, int, float, str, bytes})
_SEQUENCES = frozenset({list, tuple})
_SETS = frozenset({set, frozenset})
_SUPPORTED = (
    "None, bool, int, float, str, bytes, list, dict, tuple, set, frozenset, datetime, date, "
    "time, timedelta, UUID, Decimal, flowgraph messages, and pydantic models and Enums "
    "registered with serde.register"
)


class _TooDeep(Exception):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def _key_path(path: str, key: object) -> str:
    if type(key) is str and key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{key!r}]"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _find(value: object, path: str, depth: int, nesting: int) -> tuple[str, object, str] | None:
    """The first value under `value` that cannot be encoded: (path, value, reason).

    `depth` counts containers (msgpack's own limit), `nesting` the ext values
    among them (tuples, sets, messages, models: the codec's MAX_NESTING).
    """
    if depth > _MAX_DEPTH:
        raise _TooDeep(path)
    cls = type(value)
    if cls in _SCALARS:
        return None
    if cls is not dict and cls is not list and cls in ENCODERS:
        nesting += 1
        if nesting > MAX_NESTING:
            raise _TooDeep(path)
    if cls is dict:
        for key, item in value.items():  # type: ignore[attr-defined]  # a dict
            if type(key) not in _SCALARS:
                found = _find(key, f"{path}[key {_short(key)}]", depth + 1, nesting)
                if found is not None:
                    return found
            found = _find(item, _key_path(path, key), depth + 1, nesting)
            if found is not None:
                return found
        return None
    if cls in _SEQUENCES or (issubclass(cls, list) and cls in ENCODERS):
        for index, item in enumerate(value):  # type: ignore[arg-type]  # a sequence
            found = _find(item, f"{path}[{index}]", depth + 1, nesting)
            if found is not None:
                return found
        return None
    if cls in _SETS:
        for item in value:  # type: ignore[attr-defined]  # a set
            found = _find(item, f"{path}{{{_short(item)}}}", depth + 1, nesting)
            if found is not None:
                return found
        return None
    encode = ENCODERS.get(cls)
    if encode is None:
        return path, value, ""
    if issubclass(cls, BaseModel):
        fields = value.__dict__
        for name in cls.model_fields:
            if name not in fields:
                return path, value, f"its field {name!r} has no value"
            found = _find(fields[name], _key_path(path, name), depth + 1, nesting)
            if found is not None:
                return found
        return _find(value.__pydantic_extra__ or {}, path, depth, nesting)  # type: ignore[attr-defined]
    if issubclass(cls, Enum):
        return _find(value.value, f"{path}.value" if path else "value", depth + 1, nesting)  # type: ignore[attr-defined]
    try:  # datetime and friends: encoding the value alone says whether it can be
        encode(Encoder(), value)
    except Unsupported as exc:
        return path, value, exc.reason
    return None


def _type_name(cls: type) -> str:
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _fix(cls: type, reason: str) -> str:
    if reason:
        return f"{reason}."
    name = cls.__qualname__
    if issubclass(cls, (BaseModel, Enum)):
        return (
            f"{name} is not registered; register the class before saving: "
            f"serde.register({name}) (from flowgraph.checkpoint import serde)."
        )
    for base in (dict, list, tuple, set, frozenset, str, int, float, bytes):
        if issubclass(cls, base):
            return (
                f"Checkpoints keep exact types only; convert it to a plain {base.__name__} "
                f"({base.__name__}(value)) or make it a pydantic model and "
                f"serde.register({name})."
            )
    if cls.__module__ == "builtins":
        return (
            f"Checkpoints hold {_SUPPORTED}. Convert the value to one of these, or keep it in "
            "a pydantic model you register: serde.register(YourModel) "
            "(from flowgraph.checkpoint import serde)."
        )
    return (
        f"Checkpoints hold {_SUPPORTED}. Convert the value to one of these, or make {name} a "
        f"pydantic model and register it: serde.register({name}) "
        "(from flowgraph.checkpoint import serde)."
    )


def explain(value: object, failure: BaseException) -> SerializationError:
    """The SerializationError for a `dumps(value)` that raised `failure`."""
    try:
        found = _find(value, "", 0, 0)
    except (_TooDeep, RecursionError) as exc:
        path = exc.path if isinstance(exc, _TooDeep) else ""
        return SerializationError(
            f"Cannot serialize the value: it nests too deep{f' at {path}' if path else ''} "
            f"(over {_MAX_DEPTH} containers or {MAX_NESTING} objects; does it contain itself?)",
            path=path,
            type_name=_type_name(type(value)),
        )
    if found is None and isinstance(failure, Unsupported):
        path, bad, reason = "", failure.value, failure.reason  # found by the encoder alone
    elif found is None:
        return SerializationError(
            f"Cannot serialize {_type_name(type(value))}: {type(failure).__name__}: {failure}",
            type_name=_type_name(type(value)),
        )
    else:
        path, bad, reason = found
    type_name = _type_name(type(bad))
    where = f"at {path}" if path else "(the value itself)"
    return SerializationError(
        f"Cannot serialize {type_name} {where}: {_fix(type(bad), reason)}",
        path=path,
        type_name=type_name,
    )
