"""Node caching: a node called again with the same input reuses its earlier writes.

`add_node(..., cache_policy=CachePolicy(ttl=60))` marks a node, and
`compile(cache=InMemoryCache())` gives the graph a place to keep results.
Before such a node runs, its input (the state it sees, or a Send's
argument) is turned into a key by `key_func`; a result stored under that
key within its `ttl` is used instead of calling the node. What is stored is
the node's own return value, encoded with the checkpoint codec: a hit goes
through the same checks and reducers as a call, so it makes the same
writes (messages without ids get this step's ids, as a call's would).

Nodes without a policy are not wrapped at all: caching costs nothing for
them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from flowgraph._lazy import LazyModule
from flowgraph.errors import SerializationError
from flowgraph.graph._core.caching import BaseCache, CachePolicy, InMemoryCache
from flowgraph.graph._core.types import Command

if TYPE_CHECKING:
    import hashlib

    from flowgraph.checkpoint import serde
    from flowgraph.graph._core.spec import NodeSpec
else:  # only a node with a cache policy encodes and hashes: they load with the first one
    hashlib = LazyModule("hashlib")
    serde = LazyModule("flowgraph.checkpoint.serde")

__all__ = ["BaseCache", "CacheHit", "CachePolicy", "InMemoryCache", "cached_nodes", "namespace_of"]


class CacheHit:
    """What a cached node returns when its result came from the cache: the run loop
    takes `value` as the node's return value, and marks its update as cached."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


# -- the cached node ----------------------------------------------------------------

_DICT, _NONE, _COMMAND = "dict", "none", "command"


def _stored_form(node: str, out: Any) -> list[Any]:
    """A node's return value as plain data the codec stores (`_returned` reads it back)."""
    if out is None:
        return [_NONE]
    if isinstance(out, Command):
        return [_COMMAND, out]
    if isinstance(out, Mapping):
        return [_DICT, dict(out)]
    if isinstance(out, BaseModel):  # the state's type, returned whole
        return [_DICT, {k: getattr(out, k) for k in out.model_fields_set}]
    return [_DICT, out]  # not a valid return: the engine says so after the call


def _returned(data: list[Any]) -> Any:
    kind = data[0]
    if kind == _NONE:
        return None
    return data[1]


def namespace_of(spec: NodeSpec) -> tuple[str, ...]:
    """Where a node's results are cached: its name and its function's qualified name."""
    fn = inspect.unwrap(spec.fn)
    who = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return (spec.name, f"{getattr(fn, '__module__', '')}.{who}")


class _Cached:
    """What a cached node's key, look-up and store are, shared by the sync and async calls."""

    def __init__(self, spec: NodeSpec, policy: CachePolicy, cache: BaseCache) -> None:
        self.node = spec.name
        self.policy = policy
        self.cache = cache
        self.namespace = namespace_of(spec)

    def key(self, arg: Any) -> str:
        try:
            key = self.policy.key_func(arg)
        except SerializationError as exc:
            raise SerializationError(
                f"Node '{self.node}' has a cache_policy, but its input cannot be made a cache "
                f"key: {exc}. Give CachePolicy(key_func=...) a function of the input returning "
                "a str",
                path=exc.path,
                type_name=exc.type_name,
            ) from exc
        return key.hex() if isinstance(key, bytes) else str(key)

    def hit(self, key: str) -> tuple[bool, Any]:
        data = self.cache.get(self.namespace, key)
        return (False, None) if data is None else (True, CacheHit(_returned(serde.loads(data))))

    def keep(self, key: str, out: Any) -> None:
        try:
            data = serde.dumps(_stored_form(self.node, out))
        except SerializationError as exc:
            raise SerializationError(
                f"Node '{self.node}' has a cache_policy, but what it returned cannot be "
                f"cached: {exc}",
                path=exc.path,
                type_name=exc.type_name,
            ) from exc
        self.cache.set(self.namespace, key, data, self.policy.ttl)


def _cached_fn(spec: NodeSpec, cached: _Cached) -> Callable[[Any], Any]:
    fn = spec.fn
    if spec.is_async:

        async def call_async(arg: Any) -> Any:
            key = cached.key(arg)
            found, out = cached.hit(key)
            if not found:
                out = await fn(arg)
                cached.keep(key, out)
            return out

        return call_async

    async def finish(key: str, pending: Any) -> Any:
        out = await pending
        cached.keep(key, out)
        return out

    def call(arg: Any) -> Any:
        key = cached.key(arg)
        found, out = cached.hit(key)
        if not found:
            out = fn(arg)
            if inspect.isawaitable(out):  # a sync callable that returned a coroutine
                return finish(key, out)
            cached.keep(key, out)
        return out

    return call


def cached_nodes(nodes: dict[str, NodeSpec], cache: BaseCache | None) -> dict[str, NodeSpec]:
    """The nodes as the run calls them: those with a cache policy look in `cache` first."""
    if cache is None or not any(spec.cache_policy is not None for spec in nodes.values()):
        return nodes
    return {
        name: spec
        if spec.cache_policy is None
        else replace(spec, fn=_cached_fn(spec, _Cached(spec, spec.cache_policy, cache)))
        for name, spec in nodes.items()
    }
