"""Search filters: parsed once into conditions, evaluated on a value's JSON view.

A value is stored with the codec (any type it knows), but a filter only
sees its JSON view: dicts with string keys, lists (tuples become lists),
strings, finite numbers, booleans and None. Anything else (a datetime, a
message, bytes, a string PostgreSQL's JSONB cannot hold) is left out of the
view, so it can be stored and read back but never matches a filter. Every
backend filters by these rules: SQL backends render the conditions they can
express exactly, and the store checks every candidate here as well.

    {"kind": "preference"}                  equality
    {"profile.lang": "fr"}                  a dotted path into nested dicts
    {"profile": {"lang": "fr"}}             the same, nested
    {"stars": {"$gte": 4, "$lt": 6}}        operators: $eq $ne $gt $gte $lt $lte $in $nin $exists

Equality is exact and typed: 1 == 1.0, but True != 1 and a list equals only
the same list. `$gt`/`$gte`/`$lt`/`$lte` compare numbers with numbers and
strings with strings (by code point); a field of another type does not
match. A missing field matches only `$ne`, `$nin` and `$exists: False`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from flowgraph.errors import StoreError

__all__ = ["MISSING", "Condition", "Op", "json_view", "lookup", "matches", "parse_filter", "same"]

Op = Literal["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"]
_OPS: Final = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"})
RANGE_OPS: Final = frozenset({"$gt", "$gte", "$lt", "$lte"})


class _Missing:
    """What a path that leads nowhere yields (distinct from a stored None)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


def _is_plain_text(text: str) -> bool:
    """A string every backend's JSON can hold: no NUL (JSONB refuses it), valid UTF-8."""
    if "\x00" in text:
        return False
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def json_view(value: Any) -> Any:
    """The part of a value filters and text search see (MISSING if none of it)."""
    kind = type(value)
    if kind is str:
        return value if _is_plain_text(value) else MISSING
    if kind is bool or kind is int or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else MISSING
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if type(key) is str and _is_plain_text(key):
                seen = json_view(item)
                if seen is not MISSING:
                    out[key] = seen
        return out
    if kind is list or kind is tuple:
        items = [json_view(item) for item in value]
        return [item for item in items if item is not MISSING]
    return MISSING


@dataclass(frozen=True, slots=True)
class Condition:
    """One test on one field: `path` into nested dicts, an operator, its operand."""

    path: tuple[str, ...]
    op: Op
    operand: Any
    """A JSON-view value; for $in/$nin a tuple of them; for $exists a bool."""


def _whole(value: Any) -> bool:
    """True if the JSON view of `value` leaves nothing out."""
    if isinstance(value, Mapping):
        return all(type(k) is str and _is_plain_text(k) and _whole(v) for k, v in value.items())
    if type(value) is list or type(value) is tuple:
        return all(map(_whole, value))
    return json_view(value) is not MISSING


def _operand(value: Any, where: str) -> Any:
    if not _whole(value):
        raise StoreError(
            f"Filter value at '{where}' ({value!r}) is not JSON-like; filters compare "
            "str, int, float, bool, None, and lists and dicts of them"
        )
    return json_view(value)


def _conditions(path: tuple[str, ...], spec: Any, out: list[Condition]) -> None:
    where = ".".join(path)
    if isinstance(spec, Mapping) and spec:
        keys = [k for k in spec if isinstance(k, str) and k.startswith("$")]
        if keys and len(keys) != len(spec):
            raise StoreError(
                f"Filter at '{where}' mixes operators ({', '.join(keys)}) with field names; "
                "put the operators in a dict of their own"
            )
        if not keys:
            for name, sub in spec.items():
                _conditions((*path, *_split(name)), sub, out)
            return
        for op, operand in spec.items():
            if op not in _OPS:
                raise StoreError(
                    f"Unknown filter operator {op!r} at '{where}'; use one of "
                    f"{', '.join(sorted(_OPS))}"
                )
            out.append(Condition(path, op, _checked(op, operand, where)))
        return
    out.append(Condition(path, "$eq", _operand(spec, where)))


def _checked(op: str, operand: Any, where: str) -> Any:
    if op == "$exists":
        if not isinstance(operand, bool):
            raise StoreError(f"$exists at '{where}' takes True or False, not {operand!r}")
        return operand
    if op in ("$in", "$nin"):
        if not isinstance(operand, list | tuple | set | frozenset):
            raise StoreError(f"{op} at '{where}' takes a list of values, not {operand!r}")
        return tuple(_operand(item, where) for item in operand)
    if op in RANGE_OPS:
        if not _is_number(operand) and not (isinstance(operand, str) and _is_plain_text(operand)):
            raise StoreError(
                f"{op} at '{where}' compares with a number or a string, not {operand!r}"
            )
        if isinstance(operand, float) and not math.isfinite(operand):
            raise StoreError(f"{op} at '{where}' needs a finite number, not {operand!r}")
        return operand
    return _operand(operand, where)


def _split(name: Any) -> tuple[str, ...]:
    if not isinstance(name, str) or not name or any(not part for part in name.split(".")):
        raise StoreError(
            f"Filter field {name!r} is not a field name or a dotted path like 'profile.lang'"
        )
    return tuple(name.split("."))


def parse_filter(spec: Mapping[str, Any] | None) -> tuple[Condition, ...]:
    """The conditions a filter dict asks for; a malformed filter is a StoreError."""
    if spec is None:
        return ()
    if not isinstance(spec, Mapping):
        raise StoreError(f"filter must be a dict of field conditions, not {type(spec).__name__}")
    out: list[Condition] = []
    for name, sub in spec.items():
        _conditions(_split(name), sub, out)
    return tuple(out)


def _is_number(value: Any) -> bool:
    return type(value) is int or type(value) is float


def same(a: Any, b: Any) -> bool:
    """Equality of two JSON views, typed as JSONB compares: True != 1, 1 == 1.0."""
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def lookup(view: Any, path: Sequence[str]) -> Any:
    """The view's value at a dotted path, or MISSING."""
    for name in path:
        if not isinstance(view, dict) or name not in view:
            return MISSING
        view = view[name]
    return view


def _holds(found: Any, op: str, operand: Any) -> bool:
    if op == "$exists":
        return (found is not MISSING) is operand
    if op == "$eq":
        return found is not MISSING and same(found, operand)
    if op == "$ne":
        return found is MISSING or not same(found, operand)
    if op == "$in":
        return found is not MISSING and any(same(found, item) for item in operand)
    if op == "$nin":
        return found is MISSING or not any(same(found, item) for item in operand)
    # a range: numbers with numbers, strings with strings
    if _is_number(operand):
        if not _is_number(found):
            return False
    elif type(found) is not str:
        return False
    if op == "$gt":
        return bool(found > operand)
    if op == "$gte":
        return bool(found >= operand)
    if op == "$lt":
        return bool(found < operand)
    return bool(found <= operand)


def matches(view: Any, conditions: Sequence[Condition]) -> bool:
    """True if the JSON view meets every condition."""
    return all(_holds(lookup(view, c.path), c.op, c.operand) for c in conditions)
