"""LangGraph's `config` dict, read into the keyword arguments flowgraph runs with.

`invoke(input, {"configurable": {"thread_id": "1"}, "recursion_limit": 50})`
is LangGraph's spelling of `invoke(input, thread_id="1", recursion_limit=50)`;
both are accepted, and what the config holds besides (the caller's own
`configurable` values, `metadata`, `tags`) reaches the nodes that take a
`config` parameter. A key flowgraph does not know is an error, not silently
ignored: a misspelt key would otherwise leave a thread silently not resumed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from flowgraph._context import RunInfo
from flowgraph.state import is_typeddict_schema

__all__ = ["CallConfig", "context_value", "read_config", "thread_of"]

_KNOWN = frozenset({"configurable", "recursion_limit", "metadata", "tags", "run_id", "run_name"})
_IGNORED = {
    "callbacks": "flowgraph has no callbacks; stream(mode='events') or "
    "flowgraph.integrations.opentelemetry.instrument() show what runs",
    "max_concurrency": "a step's tasks all run concurrently",
}
DEFAULT_RECURSION_LIMIT = 100


@dataclass(slots=True)
class CallConfig:
    """What one call was given, from its keywords and its config dict together."""

    thread_id: str | None
    checkpoint_id: str | None
    recursion_limit: int
    run_id: str | None
    info: RunInfo | None
    """What nodes asking for config or runtime read (None: nothing worth keeping)."""


def _pick(what: str, keyword: Any, configured: Any, default: Any = None) -> Any:
    """The keyword's value or the config's; both given and different is an error."""
    if configured is None:
        return keyword
    if keyword is not default and keyword != configured:
        raise ValueError(
            f"{what} is given twice, as {keyword!r} and as {configured!r} in config; pass it once"
        )
    return configured


def _checked(config: Mapping[str, Any]) -> None:
    for key in config:
        if key in _IGNORED:
            raise ValueError(f"config[{key!r}] is not supported: {_IGNORED[key]}")
        if key not in _KNOWN:
            raise ValueError(
                f"config has an unknown key {key!r}; flowgraph reads "
                f"{', '.join(sorted(_KNOWN))} (or pass thread_id=..., recursion_limit=... "
                "as keyword arguments)"
            )


def merged_config(
    under: Mapping[str, Any] | None, over: Mapping[str, Any] | None
) -> dict[str, Any]:
    """`over`'s keys over `under`'s, their `configurable` (and `metadata`) dicts merged."""
    merged = {**(under or {}), **(over or {})}
    for key in ("configurable", "metadata"):
        if under and over and key in under and key in over:
            merged[key] = {**under[key], **over[key]}
    return merged


def thread_of(config: Mapping[str, Any]) -> tuple[str, str | None]:
    """`(thread_id, checkpoint_id)` of a config naming a thread (get_state, update_state)."""
    _checked(config)
    configurable = config.get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None:
        raise ValueError(
            "The config names no thread: pass {'configurable': {'thread_id': ...}} "
            "or the thread id itself"
        )
    checkpoint_id = configurable.get("checkpoint_id")
    return str(thread_id), None if checkpoint_id is None else str(checkpoint_id)


def read_config(
    config: Mapping[str, Any] | None,
    *,
    thread_id: str | None,
    checkpoint_id: str | None,
    recursion_limit: int,
    run_id: str | None,
    configurable: Mapping[str, Any] | None,
    context: Any,
    context_schema: type[Any] | None,
) -> CallConfig:
    """The call's settings: keywords and `config` merged, checked, and kept for the nodes.

    `configurable` values (from the config or the keyword of that name) are
    the caller's own, except `thread_id` and `checkpoint_id`, which are the
    run's; `recursion_limit` may come from the config too.
    """
    metadata: Mapping[str, Any] = {}
    tags: tuple[str, ...] = ()
    run_name = None
    own: dict[str, Any] = {}
    if config is not None:
        _checked(config)
        own.update(config.get("configurable") or {})
        recursion_limit = _pick(
            "recursion_limit",
            recursion_limit,
            config.get("recursion_limit"),
            DEFAULT_RECURSION_LIMIT,
        )
        run_id = _pick("run_id", run_id, _str(config.get("run_id")))
        metadata = dict(config.get("metadata") or {})
        tags = tuple(config.get("tags") or ())
        run_name = config.get("run_name")
    own.update(configurable or {})
    thread_id = _pick("thread_id", thread_id, _str(own.pop("thread_id", None)))
    checkpoint_id = _pick("checkpoint_id", checkpoint_id, _str(own.pop("checkpoint_id", None)))
    if own.pop("checkpoint_ns", "") not in ("", None):
        raise ValueError(
            "configurable['checkpoint_ns'] names a subgraph's checkpoints; flowgraph keeps a "
            "subgraph's steps in its parent's thread: read the parent's"
        )
    if context is not None:
        context = context_value(context_schema, context)
    keep = thread_id is not None or own or context is not None or metadata or tags or run_name
    info = (
        RunInfo(
            thread_id=thread_id,
            checkpoint_id=checkpoint_id,
            configurable=own,
            recursion_limit=recursion_limit,
            context=context,
            metadata=metadata,
            tags=tags,
            run_id=run_id,
            run_name=run_name,
        )
        if keep
        else None
    )
    return CallConfig(thread_id, checkpoint_id, recursion_limit, run_id, info)


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def context_value(schema: type[Any] | None, context: Any) -> Any:
    """`context` as the graph's context_schema: a dict becomes a dataclass or pydantic model.

    A TypedDict schema (or any other hint that is not a class) keeps the dict as
    given, as LangGraph does: a TypedDict cannot be checked at run time.
    """
    if schema is None or not isinstance(context, Mapping) or not isinstance(schema, type):
        return context
    if is_typeddict_schema(schema) or isinstance(context, schema):
        return context
    try:
        if dataclasses.is_dataclass(schema):
            return schema(**context)
        if issubclass(schema, BaseModel):
            return schema.model_validate(dict(context))
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"invoke(context=...) does not fit the graph's context_schema {schema.__name__}: {exc}"
        ) from exc
    return context
