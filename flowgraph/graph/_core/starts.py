"""What a state field holds before anything writes it: its default, or its reducer's start.

A pydantic field's default is made fresh for each run (a copy when it is
mutable, as pydantic does); a field with a reducer and no default starts as
its type's empty value (`[]` for `Annotated[list, operator.add]`), as in
LangGraph; and the first write to a reducer field no one started merges
into an empty container of the written value's kind.
"""

from __future__ import annotations

import collections.abc
import copy
import inspect
from collections.abc import Callable
from typing import Annotated, Any, NotRequired, Required, get_args, get_origin

from pydantic.fields import FieldInfo

__all__ = ["default_maker", "empty_like", "reducer_start"]


def default_maker(info: FieldInfo) -> Callable[[], Any]:
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


def empty_like(value: Any) -> Any:
    """What a reducer field holds before its first write: an empty container of its kind."""
    if isinstance(value, (list, tuple)):
        return []
    if isinstance(value, dict):
        return {}
    if isinstance(value, (set, frozenset)):
        return set()
    return type(value)() if isinstance(value, (int, float, str)) else None


_STARTS: dict[Any, Callable[[], Any]] = {
    list: list,
    dict: dict,
    set: set,
    frozenset: frozenset,
    tuple: tuple,
    int: int,
    float: float,
    str: str,
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    collections.abc.Set: set,
    collections.abc.MutableSet: set,
    collections.abc.Mapping: dict,
    collections.abc.MutableMapping: dict,
}


def reducer_start(hint: Any) -> Callable[[], Any] | None:
    """The empty value a TypedDict field with a reducer shows before any write (LangGraph's
    `[]` for `Annotated[list, operator.add]`), or None for a type with no obvious one."""
    while get_origin(hint) in (Annotated, Required, NotRequired):
        hint = get_args(hint)[0]
    return _STARTS.get(get_origin(hint) or hint)
